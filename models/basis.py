"""The ``default`` method's inductive training basis (spec §20 items 3–5, 11).

Everything one training set determines, from the training rows only, independent of the target:
usable columns (observed for ≥ ``MIN_OBS`` of the training models and, in LOOCV, for the model to
predict — its source row only), training-mean imputation and centring, the zero-variance filter,
deduplication of identical columns (stable: the first column represents its group), the global
SVD of the centred block truncated at numerical rank, and the normalised ranks used by selection.
"""
from __future__ import annotations

import math

import numpy as np

from .spearman import normalized_ranks

__all__ = ["RANK_RTOL", "MIN_OBS", "VAR_EPS", "svd_wide", "rank_truncation", "TrainingBasis"]

#: singular values ≤ s_max · RANK_RTOL count as zero (numerical rank)
RANK_RTOL = 1e-8
#: a column is usable in a fold when observed for at least this share of the training models
MIN_OBS = 0.75
#: a column whose centred training variance is ≤ this is constant
VAR_EPS = 1e-10


def svd_wide(A: np.ndarray):
    """Thin SVD (U, S, Vt) of a wide matrix (m ≪ p) via QR of Aᵀ (same result, ~2× faster than gesdd)."""
    m, p = A.shape
    if p <= 2 * m:
        return np.linalg.svd(A, full_matrices=False)
    Q, R = np.linalg.qr(A.T)
    U, S, Wt = np.linalg.svd(R.T)
    return U, S, Wt @ Q.T


def rank_truncation(S: np.ndarray) -> int:
    """Numerical rank of descending singular values S: #{s > s_max · RANK_RTOL} (0 if none)."""
    if S.size == 0 or S[0] <= 0:
        return 0
    return int((S > S[0] * RANK_RTOL).sum())


class TrainingBasis:
    """Everything a training set determines (target independent).

    X: (n, S) raw scores (NaN = missing); rows: training rows; mask_rows: rows that must be
    observed on a usable column (the model to predict; empty for a fit on all models).
    Attributes — cols: usable, non-constant columns (indices into X); mu: their training means;
    reps: indices into ``cols`` of the duplicate-group representatives (ascending); mult: group
    sizes; rep_cols / rep_mu: the representatives' columns and means; Bc: (m, p_rep) centred
    imputed training block on reps; Vr: (r, p_rep) right singular vectors of the full centred
    block (duplicates weighted by multiplicity) restricted to the representatives, r = numerical
    rank; lev: (r, p_rep) cumulative leverages (row c = nc of c + 1); Z: normalised ranks of the
    training block on reps.
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, mask_rows: np.ndarray, min_obs: float):
        Xtr = X[rows]
        m = rows.size
        obs = ~np.isnan(Xtr)
        ok = obs.sum(axis=0) >= max(2, math.ceil(min_obs * m - 1e-9))
        if mask_rows.size:
            ok &= ~np.isnan(X[mask_rows]).any(axis=0)
        cols = np.flatnonzero(ok)
        Bk = Xtr[:, cols]
        mu = np.nanmean(Bk, axis=0) if cols.size else np.zeros(0)
        Bk = np.where(np.isnan(Bk), mu, Bk)
        Bc = Bk - mu
        keep = (Bc * Bc).mean(axis=0) > VAR_EPS
        cols, mu, Bk, Bc = cols[keep], mu[keep], Bk[:, keep], Bc[:, keep]
        if cols.size:
            _, first, cnt = np.unique(Bk.T, axis=0, return_index=True, return_counts=True)
            o = np.argsort(first, kind="stable")
            reps, mult = first[o], cnt[o]
        else:
            reps, mult = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.rows, self.cols, self.mu = rows, cols, mu
        self.reps, self.mult = reps, mult
        self.rep_cols = cols[reps]
        self.rep_mu = mu[reps]
        self.Bc = Bc[:, reps]
        self.m = m
        if reps.size:
            sq = np.sqrt(mult.astype(np.float64))
            _, S, Vt = svd_wide(self.Bc * sq)
            r = rank_truncation(S)
            self.Vr = Vt[:r] / sq
            self.Z = normalized_ranks(Bk[:, reps])
        else:
            self.Vr = np.zeros((0, 0))
            self.Z = np.zeros((m, 0))
        self.lev = np.cumsum(self.Vr * self.Vr, axis=0)  # row c = leverage with nc = c + 1

    def centred(self, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Rows of X on the representatives, centred on the training means (missing → 0)."""
        D = X[np.ix_(rows, self.rep_cols)] - self.rep_mu
        return np.where(np.isnan(D), 0.0, D)
