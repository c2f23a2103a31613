"""Embeddings of the selected columns (spec §5).

H (Local): thin SVD of the raw (uncentred) training block; training embeddings
are the left singular vectors, other rows are projected with
x · V_k · diag(1/(S_k + 1e-12)) (no rank truncation, as published).

D-pt (Global): least-squares coordinates in the global basis restricted to the
selected columns, Π = pinv(Vt_full[:nc, sel]ᵀ)ᵀ, embedding = X[:, sel] · Π.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LocalBasis", "local_basis", "global_projection", "global_svd_vt"]

_EPS_S = 1e-12


def global_svd_vt(X: np.ndarray) -> np.ndarray:
    """§2.5 Vt of one thin SVD of the uncentred X (n × p) → (min(n,p), p)."""
    return np.linalg.svd(X, full_matrices=False)[2]


@dataclass(frozen=True)
class LocalBasis:
    """H basis of a training block X_tr[:, sel] (m × s).

    U: (m, K) training embeddings (first K left singular vectors),
    V: (s, K) right singular vectors, S: (K,) singular values,
    K = min(nc_max, min(m, s)). ``proj`` = Π = V · diag(1/(S + 1e-12)).
    """

    U: np.ndarray
    V: np.ndarray
    S: np.ndarray

    @property
    def k(self) -> int:
        return self.U.shape[1]

    @property
    def proj(self) -> np.ndarray:
        return self.V * (1.0 / (self.S + _EPS_S))

    def project(self, X_rows_sel: np.ndarray) -> np.ndarray:
        """Embed rows (h × s) → (h × K): (x · V) / (S + 1e-12)."""
        return (X_rows_sel @ self.V) / (self.S + _EPS_S)


def local_basis(X_tr_sel: np.ndarray, nc_max: int) -> LocalBasis:
    """§5.1 thin SVD of the raw training block; keep K = min(nc_max, #sv) dims."""
    U, S, Vt = np.linalg.svd(X_tr_sel, full_matrices=False)
    K = min(int(nc_max), S.size)
    return LocalBasis(U=U[:, :K], V=Vt[:K].T, S=S[:K])


def global_projection(Vt_full: np.ndarray, sel: np.ndarray, nc: int) -> np.ndarray:
    """§5.2 Π = (pinv(Vt_full[:nc, sel]ᵀ))ᵀ → (|sel|, nc'); nc' = min(nc, rows of Vt_full).

    nc is not capped by |sel| (pinv handles the rank deficit with numpy's
    default cut-off).
    """
    V_sel = Vt_full[:nc, sel].T
    return np.linalg.pinv(V_sel).T
