"""Borrowing a GPU for time-boxed visits: the tooling that sweeps the kernels' CUDA spaces on a lent GPU machine.

A lent GPU comes for a few usable minutes at a time, bare, with at most a few result files of limited size.
This package plans the visits (`plan`: which kernels, in which order, how long each takes), packs what the
machine lacks into an offline bundle under the size limit (`bundle`) and a visit's results into pack files
(`pack`), compiles ahead (`cuda_modules`) and measures with Kernel Tuner's CuPy backend (`measure`, one visit:
`lease`), stops cleanly before the deadline (`guard`), resumes earlier visits (`resume`), and merges every
visit's packs into `data/sweeps/` (`merge`); `compile_cost` times nvcc on one configuration at a time. Its
commands run as `python -m gpuvisit <command>` (`cli`).

It builds on `analysis.sweep`'s public functions; the study itself (`analysis`, the Snakemake workflow) never
imports it and reads only what it published under `data/sweeps/`. A cluster user's GPU sweep stays the
workflow's `sweep` rule.
"""
