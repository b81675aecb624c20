"""Library behind the auto-tuning strategy benchmarking suite; the Snakemake rules call into it."""

__version__ = "0.1.0"
