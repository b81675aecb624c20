"""Exhaustive sweeps of the suite's mixed-precision kernels (workflow/kernels/<name>/) with Kernel Tuner."""
