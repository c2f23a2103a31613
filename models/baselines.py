"""Goal A baselines, leave-one-model-out, on the same inputs as ``models.default.goal_a``.

All take X (n × S raw sources, NaN = missing), P (per target n × N_t, NaN =
missing) and return a ``DefaultAbsResult`` (an ``AbsResult``: pred (n, T),
actual = observed-instance target means, NaN-target models excluded from
training and metrics, exactly as in ``default``). Predictions are clipped to
``score_range`` (default [0, 1]).

* ``loocv_train_mean`` — the mean target of the training models.
* ``loocv_random_c`` — C random source columns, ``draws`` times (default 20):
  per draw, C columns drawn uniformly without replacement from the columns
  usable in the fold (observed for ≥ ``min_obs`` of the training models and
  for the held-out model, non-constant on the training rows; missing training
  cells imputed with the training column mean); the model's score is its
  mean over those C columns; the prediction is the 1-D OLS (with intercept) of
  the target on that score, fitted on the training models. The reported
  prediction is the mean over draws. RNG: ``default_rng(seed + 997·fold + 31·t)``.
* ``loocv_benchmark_ridge`` — per source benchmark a model's mean over its
  observed instances of that benchmark (benchmark averages; a benchmark is a
  feature in a fold when every training model and the held-out model have
  it); standardised on the training rows; ridge regression with the penalty
  chosen by (efficient, inner) leave-one-out on the training models
  (``sklearn.linear_model.RidgeCV``, alphas 10^-3 … 10^3).
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np

from models.default.basis import MIN_OBS, VAR_EPS
from models.common.folds import loo_training_set
from models.common.inputs import default_inputs
from models.common.metrics import masked_metrics
from models.common.regress import ols_slope
from models.common.results import DefaultAbsResult, model_names

__all__ = ["loocv_train_mean", "loocv_random_c", "loocv_benchmark_ridge", "benchmark_averages"]

_ALPHAS = tuple(10.0 ** np.arange(-3.0, 3.01, 0.5))


def _result(mode, models, targets, pred, Y, extra_warn=()):
    n = Y.shape[0]
    names = model_names(models, n)
    excluded = {t: [names[j] for j in range(n) if not np.isfinite(Y[j, k])] for k, t in enumerate(targets)}
    warns = [f"{t}: no target value for {', '.join(v)}" for t, v in excluded.items() if v] + list(extra_warn)
    return DefaultAbsResult(mode, names, list(targets), pred, Y, {}, [], masked_metrics(pred, Y, targets),
                            warnings=warns, excluded=excluded)


def _folds(Y, t):
    n = Y.shape[0]
    valid = np.isfinite(Y[:, t])
    for i in range(n):
        yield i, np.asarray(loo_training_set(n, i, valid), dtype=np.int64)


def _clip(v, score_range):
    return float(np.clip(v, *score_range)) if score_range is not None else float(v)


def loocv_train_mean(X: np.ndarray, P, targets: Sequence[str], *, models=None,
                     score_range: Optional[Tuple[float, float]] = (0.0, 1.0)) -> DefaultAbsResult:
    X, Pl, Y = default_inputs(X, P, targets)
    pred = np.full(Y.shape, np.nan)
    for t in range(len(targets)):
        for i, tr in _folds(Y, t):
            pred[i, t] = _clip(Y[tr, t].mean(), score_range)
    return _result("loocv-train-mean", models, targets, pred, Y)


def _ols1(x_tr, y_tr, x_new):
    """1-D OLS with intercept of y_tr on x_tr (m,), evaluated at x_new (the mean when x is constant)."""
    ybar, xbar = y_tr.mean(), x_tr.mean()
    a = ols_slope((x_tr - xbar)[:, None], y_tr - ybar)[0]
    return float(ybar + a * (x_new - xbar))


def loocv_random_c(X: np.ndarray, P, targets: Sequence[str], *, models=None, count: int = 100,
                   draws: int = 20, seed: int = 42, min_obs: float = MIN_OBS,
                   score_range: Optional[Tuple[float, float]] = (0.0, 1.0)) -> DefaultAbsResult:
    X, Pl, Y = default_inputs(X, P, targets)
    pred = np.full(Y.shape, np.nan)
    for t in range(len(targets)):
        for i, tr in _folds(Y, t):
            Xtr = X[tr]
            ok = (~np.isnan(Xtr)).sum(axis=0) >= max(2, math.ceil(min_obs * tr.size - 1e-9))
            ok &= ~np.isnan(X[i])
            cols = np.flatnonzero(ok)
            mu = np.nanmean(Xtr[:, cols], axis=0)
            A = np.where(np.isnan(Xtr[:, cols]), mu, Xtr[:, cols])
            keep = A.var(axis=0) > VAR_EPS
            cols, A = cols[keep], A[:, keep]
            x_new = X[i, cols]
            rng = np.random.default_rng(seed + 997 * i + 31 * t)
            c = min(count, cols.size)
            ps = []
            for _ in range(draws):
                s = rng.choice(cols.size, c, replace=False)
                ps.append(_ols1(A[:, s].mean(axis=1), Y[tr, t], float(x_new[s].mean())))
            pred[i, t] = _clip(np.mean(ps), score_range)
    return _result("loocv-random-c", models, targets, pred, Y)


def benchmark_averages(X: np.ndarray, benchmarks: Sequence[str]) -> Tuple[np.ndarray, list]:
    """Per model and source benchmark the mean over observed instances: (n, nb) (NaN when none)."""
    b = np.asarray(benchmarks, dtype=object)
    names = sorted(set(b.tolist()))
    out = np.full((X.shape[0], len(names)), np.nan)
    for k, name in enumerate(names):
        blk = X[:, b == name]
        obs = ~np.isnan(blk)
        cnt = obs.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, k] = np.where(cnt > 0, np.where(obs, blk, 0.0).sum(axis=1) / np.maximum(cnt, 1), np.nan)
    return out, names


def loocv_benchmark_ridge(X: np.ndarray, P, targets: Sequence[str], benchmarks: Sequence[str], *,
                          models=None, alphas: Sequence[float] = _ALPHAS,
                          score_range: Optional[Tuple[float, float]] = (0.0, 1.0)) -> DefaultAbsResult:
    """``benchmarks``: (S,) source benchmark name of every column of X."""
    from sklearn.linear_model import RidgeCV

    X, Pl, Y = default_inputs(X, P, targets)
    F, _ = benchmark_averages(X, benchmarks)
    pred = np.full(Y.shape, np.nan)
    for t in range(len(targets)):
        for i, tr in _folds(Y, t):
            ok = ~np.isnan(F[tr]).any(axis=0) & ~np.isnan(F[i])
            A = F[np.ix_(tr, np.flatnonzero(ok))]
            if A.shape[1] == 0:
                pred[i, t] = _clip(Y[tr, t].mean(), score_range)
                continue
            mu, sd = A.mean(axis=0), A.std(axis=0)
            sd = np.where(sd > 1e-12, sd, 1.0)
            model = RidgeCV(alphas=alphas).fit((A - mu) / sd, Y[tr, t])
            pred[i, t] = _clip(model.predict(((F[i, ok] - mu) / sd)[None, :])[0], score_range)
    return _result("loocv-benchmark-ridge", models, targets, pred, Y)
