"""Exhaustive sweeps of the suite's mixed-precision kernels (workflow/kernels/<name>/) with Kernel Tuner.

One module per job of a sweep: `shard` measures one shard (after the correctness gate) into its own
resumable cache, `merge` joins the shards' caches into one cache, definition and provenance, and
`publish` copies a merged sweep into data/sweeps/. What they share: `configs` (which configurations,
their cache keys and shards), `kt_setup` (how Kernel Tuner is called), `observers` (error metrics,
non-finite outputs, energy) and `provenance` (host, compiler, GPU). `device_metrics` computes the
error metrics on a GPU (the top-level package `gpuvisit`, which sweeps CUDA spaces in short visits to a lent
GPU, builds on these modules; nothing here imports it); `compile_cost` measures host-CPU compile times one
configuration at a time.
"""
