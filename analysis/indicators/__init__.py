"""The `indicators` stage (workflow/rules/indicators.smk): quality indicators of simulated runs and their summaries.

`registry` names the indicators every run gets (anytime IGD+ in `igd`, final hypervolume in `hypervolume`; a new
one is a module and a registry entry), `jobs` computes them for one run file, `gather` gathers them study-wide.
The constraint-aware study's budget and scores are `constraint_aware`, through `methodology` (the auto-tuning
methodology's performance score, computed by `autotuning_methodology`).
"""
