"""The `spaces` stage (workflow/rules/spaces.smk): the search-space store.

`importers` turns a Kernel Tuner cache or T4 file (with its definition) into a `space.Space` (a
configurations table plus metadata, Parquet + JSON), checking every field; `constraints` parses
restriction expressions; `fronts` computes the true Pareto fronts per objective set (`pareto`);
`table` and `compile_cost` write the spaces' tables; `export` writes a space back as a cache or T4
file; `methodology` is a space as the auto-tuning methodology sees it (its T4 file, statistics and
time budget).
"""
