"""The `hyperparams` stage (workflow/rules/hyperparams.smk): the hyperparameter grid and its selection
(docs/study.md, "Hyperparameter selection")."""
