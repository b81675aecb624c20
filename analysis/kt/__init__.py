"""Kernel Tuner as the suite drives it: a stored space as Kernel Tuner sees it and the simulated-time budget.

`space.KernelTunerSpace` is a space's tune_params, restrictions and cache in Kernel Tuner's terms, read from a
stored space or a cache file; `budget.SimulatedTimeBudget` is Kernel Tuner's tuning budget on the simulated
clock. Both the `simulate` stage and `analysis.fastpath` (its exact replicas of library code) build on them, so
neither of those two packages imports the other for them; this package imports neither.
"""
