"""Library behind the auto-tuning strategy benchmarking suite; the Snakemake rules call into it."""

from analysis import numerics

__version__ = "0.1.0"

# Before any module of the package loads numpy: the same BLAS kernels and numpy loops on every x86-64
# machine (analysis/numerics.py says why), for this process and the jobs it starts.
numerics.pin()
