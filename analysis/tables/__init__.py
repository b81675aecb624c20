"""The `tables` stage (workflow/rules/tables.smk): what the study publishes as tables.

`registry` describes each table of the comparison once (file, title, when a config yields it, builder,
report caption; a new table is an entry there), `comparison` builds them (docs/study.md, "Tables") from the
indicator summaries, `constraint_aware` the constraint-aware study's tables, `summary` one strategy's page
against the baselines, `changes` before/after tables across a change of inputs,
`readme` the README and docs/results.md text rendered from the published CSVs, and `verify` reruns
one space's comparison from data/ and compares it with the published rows.
"""
