"""Goal A regression on embeddings (spec §7).

compat, from pooled statistics: per strategy side ρ_c = Spearman(U_pool[:, c], y_pool)
(float32), w = ρ / (Σ|ρ| + 1e-12), x = U·w, 1-D OLS of y_pool on x_pool with two
degeneracy guards and a ±2·range envelope that falls back to mean(y_pool) (``ols_predict``,
the published arithmetic). U_pool is the training embedding tiled B times, so every quantity is
computed from the m distinct rows (see ``pooling.PooledStats``).

default (§20 item 6): Pearson weights on centred embeddings and the exact B → ∞ limit of the
pooled fit, i.e. an OLS through the origin of the centred target means (``pearson_fit``, built
on ``ols_slope``, the generic 1-D OLS also used by the baselines).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from models.common.pooling import PooledStats
from models.common.spearman import tiled_rank_normalized

__all__ = [
    "tiled_spearman",
    "spearman_weights",
    "prefix_weights",
    "OLSFit",
    "ols_predict",
    "GoalAFit",
    "goal_a_predict",
    "mix",
    "mix_configs",
    "ols_slope",
    "pearson_fit",
]

_EPS_W = 1e-12


def tiled_spearman(U_tr: np.ndarray, st: PooledStats, out_dtype=np.float32) -> np.ndarray:
    """Spearman of each column of tile(U_tr, B) vs y_pool → (k,) ``out_dtype``.

    U_tr: (m, k) training embeddings; st: pooled statistics of the labels.
    Equal to ``spearman_columns(np.tile(U_tr, (B, 1)), y_pool)`` up to float
    rounding before the cast.
    """
    Z = tiled_rank_normalized(U_tr, st.B)
    return ((Z.T @ st.zsum) / (st.m * st.B)).astype(out_dtype)


def spearman_weights(rho: np.ndarray) -> np.ndarray:
    """w = ρ / (Σ|ρ| + 1e-12) (signed, L1-normalised), float64 (k,)."""
    rho = np.asarray(rho, dtype=np.float64)
    return rho / (np.abs(rho).sum() + _EPS_W)


def prefix_weights(rho: np.ndarray) -> np.ndarray:
    """Weights of every prefix: W (k, k), column j = spearman_weights(ρ[:j+1]) (zero-padded).

    Lets all nc = 1..k predictions of one basis be computed in one product.
    """
    rho = np.asarray(rho, dtype=np.float64)
    k = rho.size
    W = np.zeros((k, k))
    for j in range(k):
        W[: j + 1, j] = spearman_weights(rho[: j + 1])
    return W


@dataclass(frozen=True)
class OLSFit:
    """Vectorised 1-D OLS results for J candidate x-vectors.

    pred: (h, J) predictions (after guards and envelope), slope: (J,) (0 when
    a degeneracy guard fired), xbar: (J,), guarded: (J,) bool, clamped: (h, J) bool.
    """

    pred: np.ndarray
    slope: np.ndarray
    xbar: np.ndarray
    guarded: np.ndarray
    clamped: np.ndarray


def ols_predict(x_tr: np.ndarray, x_new: np.ndarray, st: PooledStats) -> OLSFit:
    """§7.4 pooled 1-D OLS with intercept evaluated at x_new.

    x_tr: (m,) or (m, J) training x (one value per training model; the pool
    repeats it B times); x_new: (h,) or (h, J). The pooled slope equals
    Σ_j dx_j (ȳ_j − ȳ) / Σ_j dx_j² with ȳ_j the bootstrap mean of model j.
    Guards: pop std(x_pool) < 1e-8·max(|mean|, 1e-12) or Σ_pool dx² < 1e-12 →
    mean(y_pool). Envelope: outside [ymin − 2R, ymax + 2R] (R = max(range,
    1e-6)) or not finite → mean(y_pool).
    """
    x_tr = np.asarray(x_tr, dtype=np.float64)
    x_new = np.asarray(x_new, dtype=np.float64)
    if x_tr.ndim == 1:
        x_tr = x_tr[:, None]
    if x_new.ndim == 1:
        x_new = x_new[:, None]
    xbar = x_tr.mean(axis=0)
    dx = x_tr - xbar
    ss = (dx * dx).sum(axis=0)
    std = np.sqrt(ss / x_tr.shape[0])
    guarded = (std < 1e-8 * np.maximum(np.abs(xbar), 1e-12)) | (st.B * ss < 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (dx * (st.ybar_j - st.ybar)[:, None]).sum(axis=0) / ss
        slope = np.where(guarded, 0.0, slope)
        pred = slope * (x_new - xbar) + st.ybar
    R = max(st.ymax - st.ymin, 1e-6)
    bad = ~np.isfinite(pred) | (pred < st.ymin - 2 * R) | (pred > st.ymax + 2 * R)
    clamped = bad & ~guarded
    pred = np.where(bad | guarded, st.ybar, pred)
    return OLSFit(pred=pred, slope=slope, xbar=xbar, guarded=guarded, clamped=clamped)


@dataclass(frozen=True)
class GoalAFit:
    """Goal A fit of one side for nc = 1..K (prefixes of the embedding).

    pred: (h, K) predictions for the new rows, rho: (K,) float32 Spearman,
    W: (K, K) prefix weights (column nc-1), slope: (K,), xbar: (K,).
    """

    pred: np.ndarray
    rho: np.ndarray
    W: np.ndarray
    slope: np.ndarray
    xbar: np.ndarray


def goal_a_predict(U_tr: np.ndarray, U_new: np.ndarray, st: PooledStats,
                   prefixes: bool = True, rho_dtype=np.float32) -> GoalAFit:
    """§7 Goal A for one side: U_tr (m, K), U_new (h, K).

    prefixes=True: predictions for every nc = 1..K (column nc-1) — valid for
    the H side where nc_h selects the first nc columns of one SVD basis.
    prefixes=False: one prediction using all K columns (D-pt side), K = 1 column.
    """
    U_tr = np.asarray(U_tr, dtype=np.float64)
    U_new = np.asarray(U_new, dtype=np.float64)
    if U_new.ndim == 1:
        U_new = U_new[None, :]
    rho = tiled_spearman(U_tr, st, rho_dtype)
    if prefixes:
        W = prefix_weights(rho)
    else:
        W = spearman_weights(rho)[:, None]
    fit = ols_predict(U_tr @ W, U_new @ W, st)
    return GoalAFit(pred=fit.pred, rho=rho, W=W, slope=fit.slope, xbar=fit.xbar)


def mix(m: float, h, d):
    """ŷ = m·h + (1 − m)·d; with m = 0 (1) only d (h) is used."""
    if m == 0.0:
        return d
    if m == 1.0:
        return h
    return m * h + (1.0 - m) * d


def mix_configs(m: np.ndarray, H: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``mix`` for K configs at once: m (K,), H and D (K, …) → (K, …); row k = mix(m[k], H[k], D[k])."""
    m = np.asarray(m).reshape((-1,) + (1,) * (H.ndim - 1))
    out = m * H + (1.0 - m) * D
    out = np.where(m == 0.0, D, out)
    return np.where(m == 1.0, H, out)


def ols_slope(x: np.ndarray, yc: np.ndarray) -> np.ndarray:
    """1-D OLS slopes through the origin of yc (m,) on every column of x (m, K) → (K,).

    Centre x and yc first for the usual OLS with intercept. A column with Σx² ≤ 1e-12 gets 0.
    """
    ss = (x * x).sum(axis=0)
    return np.where(ss > 1e-12, (x.T @ yc) / np.where(ss > 1e-12, ss, 1.0), 0.0)


def pearson_fit(E_tr: np.ndarray, E_new: np.ndarray, yc: np.ndarray, ybar: float,
                nc_list: Optional[Sequence[int]] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Pearson-weighted 1-D OLS on centred embeddings (``default`` Goal A, one side).

    E_tr: (m, k) centred training embeddings; E_new: (h, k) embeddings of the rows to predict;
    yc: (m,) centred training targets, ybar their mean. Weights w = ρ / (Σ|ρ| + 1e-12) of the
    Pearson correlations ρ (0 for a constant column), x = E·w, slope = ``ols_slope``.
    nc_list: fit every prefix of nc columns (capped at k), one column per nc; None: one fit on
    all k columns. Returns (pred (h, K), coefs (k, K)) with coefs[:, j] mapping an embedding row
    to (prediction − ȳ).
    """
    k = E_tr.shape[1]
    norms = np.sqrt((E_tr * E_tr).sum(axis=0))
    ny = math.sqrt(float(yc @ yc))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where((norms > 0) & (ny > 0), (E_tr.T @ yc) / (norms * max(ny, 1e-300)), 0.0)
    if nc_list is not None:
        W = np.zeros((k, len(nc_list)))
        for j, nc in enumerate(nc_list):
            kk = min(nc, k)
            W[:kk, j] = spearman_weights(rho[:kk])
    else:
        W = spearman_weights(rho)[:, None]
    coefs = W * ols_slope(E_tr @ W, yc)
    return ybar + E_new @ coefs, coefs
