"""The `tables` stage (workflow/rules/tables.smk): what the study publishes as tables.

`comparison` builds the comparison's tables (STUDY §4) from the indicator summaries, `summary` one
strategy's page against the baselines, `changes` before/after tables across a change of inputs,
`readme` the README and docs/results.md text rendered from the published CSVs, and `verify` reruns
one space's comparison from data/ and compares it with the published rows.
"""
