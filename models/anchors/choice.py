"""The choice of a model's next anchors: the items whose results most reduce the posterior variance of its
full mean on the target, per unit of expected cost. Pure numpy, deterministic (ties: lowest index).

The model's person parameters u = (theta, slip) have, under its current posterior w(g) (from its prior and
the anchors it already has), mean u0 and covariance C0. Linearising the full mean in u, the variance left
after also running a set S of items is

    Var(S) = D(S)' (C0^-1 + sum_{j in S} I_j)^-1 D(S) + N(S)
    I_j    = sum_g w(g) grad P_j(g) grad P_j(g)' / (P_j(g)(1 - P_j(g)))     (expected Fisher information)
    D(S)   = sum_{j in M \\ (A u S)} sum_g w(g) grad P_j(g) / n               (gradient of the unrun part)
    N(S)   = sum_{j in M \\ (A u S)} sum_g w(g) P_j(g)(1 - P_j(g)) / n^2      (unrun items' coin flips)

with grad P = ((1 - slip) a sigma(1 - sigma), -sigma), M the model's items (n) and A its anchors. Items are
added greedily, each time the one with the largest (Var(S) - Var(S + j)) / cost_j, never one in A or S.
Adaptive use: choose a batch, run it, add the results to the anchors (the posterior moves) and choose again.
"""
from __future__ import annotations

import numpy as np

from .grid import Grid
from .items import ItemParams
from .posterior import log_likelihood, posterior_weights

__all__ = ["item_terms", "next_anchors", "variance_path", "MIN_COST_SHARE"]

MIN_COST_SHARE = 0.05    # an item's expected cost is floored at this share of the median (a free item is not
                         # infinitely attractive)
_RIDGE = 1e-6            # added to the posterior variances (a grid with one slip level fixes the slip)


def item_terms(params: ItemParams, grid: Grid, weights: np.ndarray, n: int):
    """Per item, under one model's posterior ``weights`` (P,) and a full mean over ``n`` items:
    info (3, n_items) the expected Fisher information entries (theta-theta, theta-slip, slip-slip);
    slope (2, n_items) the expected gradient of P / n; unrun_var (n_items,) E[P(1 - P)] / n^2."""
    tt, ts, ss, d_theta, d_slip, var = params.table(grid, "terms", lambda: _term_tables(params, grid))
    info = np.stack([weights @ tt, weights @ ts, weights @ ss])
    slope = np.stack([weights @ d_theta, weights @ d_slip]) / n
    return info, slope, (weights @ var) / (n * n)


def _term_tables(params: ItemParams, grid: Grid) -> tuple[np.ndarray, ...]:
    """The (P, n) tables behind ``item_terms``, functions of the items and the grid alone, so computed once
    per item model (``ItemParams.table``): the calibration calls ``item_terms`` ~2,000 times per target with
    the same items, and building these tables was ~90 % of its time (1,000 models x 2,935 items).
    (d_theta^2 / var, d_theta d_slip / var, d_slip^2 / var, d_theta, d_slip, var)."""
    keep = 1 - grid.slip[:, None]
    p = np.clip(params.prob(grid), 1e-12, 1 - 1e-12)            # (P, n)
    sig = p / keep
    d_theta = keep * params.a[None, :] * sig * (1 - sig)
    d_slip = -sig
    var = p * (1 - p)
    return d_theta * d_theta / var, d_theta * d_slip / var, d_slip * d_slip / var, d_theta, d_slip, var


def _quadratic(prec: np.ndarray, d: np.ndarray) -> np.ndarray:
    """d' prec^-1 d for 2x2 precisions given as (3, ...) entries and gradients (2, ...)."""
    a, b, c = prec
    return (c * d[0] ** 2 - 2 * b * d[0] * d[1] + a * d[1] ** 2) / (a * c - b * b)


def _start(params: ItemParams, grid: Grid, log_prior: np.ndarray, y: np.ndarray, observed: np.ndarray,
           members: np.ndarray):
    """The linearised state before any new item: (info, slope, unrun_var, prec (3,), d_left (2,), n_left,
    candidates (n_items,) bool) under the model's current posterior (module doc)."""
    observed = np.asarray(observed, dtype=bool)
    members = np.asarray(members, dtype=bool)
    w = posterior_weights(log_prior, log_likelihood(params, grid, y, observed))[0]
    info, slope, unrun_var = item_terms(params, grid, w, int(members.sum()))
    u = np.stack([grid.theta, grid.slip])
    centred = u - (u @ w)[:, None]
    cov = (centred * w) @ centred.T + _RIDGE * np.eye(2)
    inv = np.linalg.inv(cov)
    prec = np.array([inv[0, 0], inv[0, 1], inv[1, 1]])
    candidates = members & ~observed
    return info, slope, unrun_var, prec, slope[:, candidates].sum(1), float(unrun_var[candidates].sum()), candidates


def next_anchors(params: ItemParams, grid: Grid, log_prior: np.ndarray, y: np.ndarray, observed: np.ndarray,
                 members: np.ndarray, count: int, cost: np.ndarray | None = None) -> np.ndarray:
    """Indices (count,) of the next items to run, best first (fewer when fewer remain).

    y, observed, members: (n_items,) one model's results, anchors (bool) and item set (bool);
    log_prior: (P,); cost: (n_items,) expected cost of each item (None: all equal)."""
    info, slope, unrun_var, prec, d_left, n_left, candidates = _start(params, grid, log_prior, y, observed, members)
    if cost is None:
        price = np.ones(candidates.shape[0])
    else:
        price = np.asarray(cost, dtype=np.float64)
        typical = np.nanmedian(price[candidates]) if candidates.any() else 1.0
        typical = typical if np.isfinite(typical) and typical > 0 else 1.0
        price = np.maximum(np.where(np.isfinite(price), price, typical), MIN_COST_SHARE * typical)
    chosen: list[int] = []
    for _ in range(min(count, int(candidates.sum()))):
        current = _quadratic(prec, d_left) + n_left
        after = _quadratic(prec[:, None] + info, d_left[:, None] - slope) + (n_left - unrun_var)
        gain = np.where(candidates, (current - after) / price, -np.inf)
        j = int(np.argmax(gain))
        chosen.append(j)
        candidates[j] = False
        prec = prec + info[:, j]
        d_left = d_left - slope[:, j]
        n_left -= unrun_var[j]
    return np.asarray(chosen, dtype=np.int64)


def variance_path(params: ItemParams, grid: Grid, log_prior: np.ndarray, y: np.ndarray, observed: np.ndarray,
                  members: np.ndarray, order: np.ndarray) -> np.ndarray:
    """(len(order) + 1,) the linearised variance of the full mean (shares^2) left after running the first k
    items of ``order`` (k = 0 .. len(order)), before their results are known: Var(S) of the module doc.
    ``order`` holds items that are members and not yet observed (e.g. :func:`next_anchors`' choice)."""
    info, slope, unrun_var, prec, d_left, n_left, _ = _start(params, grid, log_prior, y, observed, members)
    out = [_quadratic(prec, d_left) + n_left]
    for j in np.asarray(order, dtype=np.int64):
        prec = prec + info[:, j]
        d_left = d_left - slope[:, j]
        n_left -= unrun_var[j]
        out.append(_quadratic(prec, d_left) + n_left)
    return np.maximum(np.asarray(out, dtype=np.float64), 0.0)
