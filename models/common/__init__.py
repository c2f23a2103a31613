"""Shared maths of every method: Spearman ranks, selection orders, embeddings, regressions, pooling,
metrics, folds, configurations, result types, stored proxy forms, tuning grids."""
