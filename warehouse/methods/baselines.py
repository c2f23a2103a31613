"""The baselines every method is measured against (``models.baselines``), Goal A only, evaluated only.

* ``mean``: the training models' mean target;
* ``random-c``: C random source instances, their mean score, a 1-D OLS (20 draws);
* ``bench-ridge``: ridge regression on source-benchmark (leaf) averages.

Under a split other than ``loo`` the held-out models' targets are hidden and the leave-one-out baseline
runs on what remains (:func:`warehouse.methods.base.masked_split`).
"""
from __future__ import annotations

import numpy as np

from models.baselines import loocv_benchmark_ridge, loocv_random_c, loocv_train_mean
from warehouse.methods.base import Method, masked_split
from warehouse.methods.data import Folds
from warehouse.methods.options import Options
from warehouse.methods.results import Evaluation, Fit, abs_rows


class Baseline(Method):
    """A leave-one-out baseline ``loo(matrices, X, P, opts)``."""

    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        m = folds.matrices
        if folds.split != "loo":
            return masked_split(folds, lambda X, P: self.loo(folds, X, P, opts))
        result = self.loo(folds, m.X, m.P, opts)
        return Evaluation(abs_rows(m.models, m.targets, result.pred), np.asarray(result.actual, float),
                          warnings=list(result.warnings))

    def loo(self, folds: Folds, X: np.ndarray, P: list[np.ndarray], opts: Options):
        raise NotImplementedError


class Mean(Baseline):
    name = "mean"
    summary = "baseline: the training models' mean target"
    reads = {"abs": frozenset()}

    def loo(self, folds, X, P, opts):
        return loocv_train_mean(X, P, folds.matrices.targets, models=folds.matrices.models)


class RandomC(Baseline):
    name = "random-c"
    summary = "baseline: C random source instances, their mean score, a 1-D OLS (20 draws)"
    reads = {"abs": frozenset({"count", "seed"})}

    def loo(self, folds, X, P, opts):
        m = folds.matrices
        return loocv_random_c(X, P, m.targets, models=m.models, count=opts.count, seed=opts.seed)


class BenchRidge(Baseline):
    name = "bench-ridge"
    summary = "baseline: ridge regression on source-benchmark (leaf) averages"
    reads = {"abs": frozenset()}

    def loo(self, folds, X, P, opts):
        m = folds.matrices
        return loocv_benchmark_ridge(X, P, m.targets, m.column_benchmarks(), models=m.models)
