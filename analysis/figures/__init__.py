"""The study's figures: one module per figure family, each drawing from DataFrames in the shared style."""
