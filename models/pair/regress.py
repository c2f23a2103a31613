"""Goal B regressors on pair differences (spec §6, §8), and the one Newton logistic solver.

All fits are no-intercept: a pair row is Dp = E[a] − E[b] (embedding differences), a label says
whether a beat b. The logistic objective is mean BCE + (α/2)‖w‖², α = 0.1 as published.

* ``fit_logit_soft`` — compat: L-BFGS-B from 0 with the analytic gradient, ≤ 200 iterations,
  SciPy's default tolerances (the published optimiser), on soft labels (exactly the pooled
  objective, ``pairwise.soft_labels``); all labels equal → skipped, w = 0 (§8).
* ``fit_ols_pooled`` — compat's reg='ols' alternative on the explicit pool.
* ``newton_logistic`` — Newton's method with step halving to the exact optimum of a ridge
  logistic (used by ``fit_logit_newton``, the ``default`` pair fit, and by the ``default``
  Platt calibration).
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import numpy as np
from models.common.special import expit

from models.pair.pairwise import pair_index
from models.common.spearman import spearman_columns

__all__ = ["ALPHA", "MAXITER", "softplus", "logit_objective", "degenerate_labels", "fit_logit_soft",
           "fit_logit_pooled", "fit_ols_pooled", "newton_logistic", "fit_logit_newton", "fit_logit_pairs"]

ALPHA = 0.1
MAXITER = 200


def softplus(z):
    """log(1 + eᶻ), overflow-free."""
    return np.logaddexp(0.0, z)


def logit_objective(D: np.ndarray, f: np.ndarray,
                    alpha: float) -> Callable[[np.ndarray], Tuple[float, np.ndarray]]:
    """w ↦ (mean_p[softplus(D_p·w) − f_p·D_p·w] + (α/2)‖w‖², gradient) for D (P, k), f (P,)."""
    N = D.shape[0]

    def fun(w):
        z = D @ w
        loss = float((softplus(z) - f * z).sum() / N + 0.5 * alpha * (w @ w))
        g = D.T @ (expit(z) - f) / N + alpha * w
        return loss, g

    return fun


def degenerate_labels(labels: np.ndarray) -> bool:
    """All pooled hard labels equal (given soft labels: all 0 or all 1)."""
    return bool(np.all(labels == 0.0) or np.all(labels == 1.0))


def fit_logit_soft(Dp: np.ndarray, f: np.ndarray, alpha: float = ALPHA,
                   maxiter: int = MAXITER) -> Tuple[np.ndarray, bool]:
    """No-intercept ridge logistic on pair differences with soft labels (compat, L-BFGS-B).

    Dp: (P, k) pair-difference rows; f: (P,) soft labels in [0, 1].
    Minimises mean_p [softplus(Dp_p·w) − f_p·Dp_p·w] + (α/2)‖w‖² with L-BFGS-B
    from 0 (analytic gradient). Equal to the pooled hard-label objective when
    f = ``soft_labels`` and the pool tiles Dp (§6). Returns (w (k,), skipped);
    skipped = all hard labels equal (f all 0 or all 1) → w = 0 (§8).
    """
    Dp = np.asarray(Dp, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    k = Dp.shape[1]
    if k == 0 or degenerate_labels(f):
        return np.zeros(k), True
    from scipy.optimize import minimize  # ~0.5 s to import: only compat's fits need it

    res = minimize(logit_objective(Dp, f, alpha), np.zeros(k), jac=True, method="L-BFGS-B",
                   options={"maxiter": int(maxiter)})
    return np.asarray(res.x, dtype=np.float64), False


def fit_logit_pooled(D_pool: np.ndarray, labels: np.ndarray, alpha: float = ALPHA,
                     maxiter: int = MAXITER) -> Tuple[np.ndarray, bool]:
    """The published explicit fit on the pooled rows (B·P × k, hard labels). Reference/test only."""
    return fit_logit_soft(D_pool, labels, alpha, maxiter)


def fit_ols_pooled(Dp: np.ndarray, Yb: np.ndarray) -> Tuple[np.ndarray, float]:
    """§8 alternative reg='ols' (explicit pool): w = L1-normalised Spearman weights of the pooled
    D columns vs dy_pool, slope through the origin on x = D_pool·w. Returns (w (k,), slope);
    slope 0 when Σx² < 1e-12. The margin is slope·(u_i − u_j)·w."""
    m = Yb.shape[1]
    A, Bi = pair_index(m)
    B = Yb.shape[0]
    D_pool = np.tile(np.asarray(Dp, dtype=np.float64), (B, 1))
    dy = (Yb[:, A] - Yb[:, Bi]).astype(np.float64).ravel()
    rho = spearman_columns(D_pool, dy).astype(np.float64)
    w = rho / (np.abs(rho).sum() + 1e-12)
    x = D_pool @ w
    sx = float(x @ x)
    slope = float(x @ dy) / sx if sx >= 1e-12 else 0.0
    return w, slope


def newton_logistic(X: np.ndarray, y: np.ndarray, ridge: np.ndarray, *, average: bool = True,
                    tol: float = 1e-12, maxiter: int = 100, step_tol: Optional[float] = 1e-15) -> np.ndarray:
    """Exact minimiser of L(w) = Σ_p[softplus(X_p·w) − y_p·X_p·w] / s + ½ wᵀRw by Newton's method.

    X: (P, k) rows, y: (P,) labels in [0, 1], ridge R: (k, k) symmetric positive semi-definite;
    s = P when ``average`` (mean loss), else 1 (summed loss). From w = 0; each Newton step is
    halved until the loss does not increase (or the step is < 1e-10 of a full one). Stops when
    max|∇L| < ``tol``, after ``maxiter`` steps, or (``step_tol`` set) when a step moves w by less
    than ``step_tol``. Strictly convex when R is positive definite, so the optimum is unique.
    Returns w (k,) (zeros when X has no row or no column).
    """
    X = np.asarray(X, dtype=np.float64)
    P, k = X.shape
    w = np.zeros(k)
    if k == 0 or P == 0:
        return w
    scale = P if average else 1.0

    def loss(v):                   # and X·v, which the next step needs again
        z = X @ v
        return float((softplus(z) - y * z).sum() / scale + 0.5 * v @ ridge @ v), z

    def gradient_hessian(v, z):
        s = expit(z)
        return X.T @ (s - y) / scale + ridge @ v, lambda: (X * (s * (1 - s))[:, None]).T @ X / scale + ridge

    return _newton(loss, gradient_hessian, w, tol=tol, maxiter=maxiter, step_tol=step_tol)


def _newton(loss, gradient_hessian, w: np.ndarray, *, tol: float, maxiter: int,
            step_tol: Optional[float]) -> np.ndarray:
    """Newton's method from ``w`` with step halving: ``loss(v)`` -> (value, margins z), and
    ``gradient_hessian(v, z)`` -> (gradient (k,), a callable giving the Hessian (k, k): built only when
    the gradient is not yet below ``tol``). Each step is halved until the loss does not increase (or the
    step is < 1e-10 of a full one); stops when max|gradient| < ``tol``, after ``maxiter`` steps, or
    (``step_tol`` set) when a step moves w by less than ``step_tol``."""
    cur, z = loss(w)
    for _ in range(maxiter):
        g, hessian = gradient_hessian(w, z)
        if np.max(np.abs(g)) < tol:
            break
        step = np.linalg.solve(hessian(), g)
        t = 1.0
        while True:
            nw = w - t * step
            nl, nz = loss(nw)
            if nl <= cur + 1e-15 * max(1.0, abs(cur)) or t < 1e-10:
                break
            t *= 0.5
        if step_tol is not None and np.max(np.abs(nw - w)) < step_tol:
            w = nw
            break
        w, cur, z = nw, nl, nz
    return w


def fit_logit_newton(Dp: np.ndarray, f: np.ndarray, alpha: float = ALPHA, tol: float = 1e-12,
                     maxiter: int = 100) -> np.ndarray:
    """Exact minimiser of mean_p[softplus(Dp_p·w) − f_p·Dp_p·w] + (α/2)‖w‖² (``default`` pair fit).
    Dp: (P, k), f: (P,) → w (k,). Strictly convex (α > 0), so unique."""
    Dp = np.asarray(Dp, dtype=np.float64)
    return newton_logistic(Dp, f, alpha * np.eye(Dp.shape[1]), average=True, tol=tol, maxiter=maxiter)


def fit_logit_pairs(E: np.ndarray, F_upper: np.ndarray, alpha: float = ALPHA, tol: float = 1e-12,
                    maxiter: int = 100) -> np.ndarray:
    """``fit_logit_newton`` on every ordered pair of E's m rows (Dp = E[a] − E[b], a ≠ b), written on the
    margins instead of an m(m−1) × k design: the same objective, so the same optimum, at a fraction of
    the cost for many models (810k ordered pairs at 900 models).

    E: (m, k) embeddings; F_upper: (m(m−1)/2,) labels f_ab of the pairs a < b in ``np.triu_indices``
    order, with f_ba = 1 − f_ab (the soft labels are). The margin of (a, b) is u_a − u_b with u = E·w;
    the pair (b, a) has margin −z and label 1 − f, so its loss softplus(−z) − (1 − f)(−z) equals
    softplus(z) − f·z: each unordered pair counts twice. Gradient and Hessian are sums over pairs of
    (e_a − e_b) terms, i.e. Eᵀ(row sums) and Eᵀ(Laplacian)E of m × m weight matrices. Newton with
    step halving and the stopping rule of ``newton_logistic``. → w (k,)."""
    E = np.asarray(E, dtype=np.float64)
    m, k = E.shape
    w = np.zeros(k)
    if k == 0 or m < 2:
        return w
    ia, ib = np.triu_indices(m, 1)
    f = np.asarray(F_upper, dtype=np.float64)
    scale = 2.0 / (m * (m - 1))              # mean over the ordered pairs, each unordered pair twice
    ridge = alpha * np.eye(k)

    def loss(v):
        u = E @ v
        z = u[ia] - u[ib]
        e = np.exp(-np.abs(z))
        soft = np.maximum(z, 0.0) + np.log1p(e)      # softplus, ~1.5x faster than logaddexp
        return float((soft - f * z).sum() * scale + 0.5 * v @ ridge @ v), (z, e)

    def gradient_hessian(v, margins):
        z, e = margins
        s = np.where(z >= 0, 1.0, e) / (1.0 + e)     # expit(z) from the loss's exp(-|z|): one exp per step
        r = s - f
        node = np.bincount(ia, weights=r, minlength=m) - np.bincount(ib, weights=r, minlength=m)

        def hessian():
            # Eᵀ (diag(W 1) − W) E with W the symmetric pair weights, from their upper triangle U alone
            # (W = U + Uᵀ): no transposed copy, no m × m diagonal matrix (half the Hessian's time at 800 models)
            U = np.zeros((m, m))
            U[ia, ib] = s * (1 - s)
            degree = U.sum(axis=1) + U.sum(axis=0)
            laplacian_e = degree[:, None] * E - (U @ E + U.T @ E)
            return E.T @ laplacian_e * scale + ridge
        return E.T @ node * scale + ridge @ v, hessian

    return _newton(loss, gradient_hessian, w, tol=tol, maxiter=maxiter, step_tol=1e-15)
