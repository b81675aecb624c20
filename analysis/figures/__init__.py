"""The `figures` stage (workflow/rules/figures.smk): one module per figure family, each drawing from
DataFrames in the shared style (`style`); `cli` has one command per figure, `contracts` the columns
each figure's input must have."""
