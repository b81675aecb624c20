"""The `hyperparams` stage (workflow/rules/hyperparams.smk): the hyperparameter grid of STUDY §3 and its selection."""
