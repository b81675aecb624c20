"""Library behind the auto-tuning strategy benchmarking suite; the Snakemake rules call into it."""

from analysis import numerics

__version__ = "0.1.0"

# Before any module of the package loads numpy: the same BLAS kernels and numpy loops on every x86-64
# machine (analysis/numerics.py says why), for this process and the jobs it starts.
numerics.pin()


def __getattr__(name: str):
    """`analysis.compare(strategy, suite="quick")` (analysis.baselines.compare), loaded on first use: it imports
    Kernel Tuner, which the workflow's jobs that import this package do not need."""
    if name == "compare":
        from analysis.baselines import compare  # noqa: PLC0415 - a lazy export (PEP 562)

        return compare
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
