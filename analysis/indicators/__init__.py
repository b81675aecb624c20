"""Quality indicators of simulated runs: anytime IGD+, final hypervolume, and their summaries."""
