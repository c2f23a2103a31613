"""Platt calibration of Goal B margins: p(k beats j) = σ(a·margin + b) (spec §8, §20 item 8).

* ``platt_fit`` — compat, as published: fitted in-sample on the evaluated directed pairs, L-BFGS-B
  from (1, 0) without a gradient.
* ``platt_ridge`` / ``platt_ridge_pairs`` — default: a logistic fit with a mild ridge on a (keeps a
  finite under separation), solved exactly (``pair_regress.newton_logistic``); the drivers fit it
  on out-of-fold margins only (cross-fitting).
"""
from __future__ import annotations

import math
from typing import Tuple

import numpy as np
from models.common.special import expit

from models.pair.regress import newton_logistic, softplus
from models.pair.pairwise import TIE_EPS, directed_pair_mask

__all__ = ["platt_fit", "platt_prob", "PLATT_RIDGE", "platt_ridge", "platt_ridge_pairs"]

#: ridge λ on the slope a of the default calibration
PLATT_RIDGE = 1.0


def platt_fit(margins: np.ndarray, y: np.ndarray) -> Tuple[float, float]:
    """§8 Platt parameters (a, b) on directed pairs k ≠ j, |Δy| ≥ 1e-9, finite margin.

    Minimises Σ softplus(a·m + b) − label·(a·m + b) (label = 1 iff y_k > y_j)
    with L-BFGS-B from (1, 0). As published, no gradient is supplied (SciPy's
    2-point finite differences; this reproduces the reference parameters,
    including (0, 0) on the blown-up margins of §18 item 23, where the line
    search aborts at the origin). Returns (0, 0) when there are no usable
    pairs or the optimiser returns a non-finite point.
    """
    mask, win = directed_pair_mask(y)
    M = np.asarray(margins, dtype=np.float64)
    ok = mask & np.isfinite(M)
    mv = M[ok]
    lab = win[ok].astype(np.float64)
    if mv.size == 0:
        return 0.0, 0.0

    def fun(p):
        z = p[0] * mv + p[1]
        return float((softplus(z) - lab * z).sum())

    from scipy.optimize import minimize  # ~0.5 s to import: only compat's fits need it

    with np.errstate(over="ignore", invalid="ignore"):
        res = minimize(fun, np.array([1.0, 0.0]), method="L-BFGS-B")
    a, b = float(res.x[0]), float(res.x[1])
    if not (math.isfinite(a) and math.isfinite(b)):
        return 0.0, 0.0
    return a, b


def platt_prob(margins: np.ndarray, a: float, b: float) -> np.ndarray:
    """σ(a·margin + b) (NaN where the margin is NaN)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return expit(a * np.asarray(margins, dtype=np.float64) + b)


def platt_ridge(margins: np.ndarray, labels: np.ndarray, lam: float = PLATT_RIDGE) -> Tuple[float, float]:
    """Logistic fit of labels (P,) on a·margin + b (margins (P,)), penalty (λ/2)·a² on the summed
    loss (and 1e-8 on b, for a unique optimum). (0, 0) when every margin is 0 or there is none."""
    mv = np.asarray(margins, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.float64)
    if mv.size == 0 or not np.any(mv != 0):
        return 0.0, 0.0
    X = np.stack([mv, np.ones_like(mv)], axis=1)
    p = newton_logistic(X, lab, np.diag([lam, 1e-8]), average=False, tol=1e-10, maxiter=100, step_tol=None)
    return float(p[0]), float(p[1])


def platt_ridge_pairs(M: np.ndarray, y: np.ndarray) -> Tuple[float, float]:
    """``platt_ridge`` on the directed margins M (n, n) (NaN = not predicted) of truths y (n,)
    (NaN = excluded): the pairs with finite margin and |y_k − y_j| ≥ 1e-9, label y_k > y_j."""
    dy = y[:, None] - y[None, :]
    ok = np.isfinite(M) & np.isfinite(dy) & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
    return platt_ridge(M[ok], (dy[ok] > 0).astype(np.float64))
