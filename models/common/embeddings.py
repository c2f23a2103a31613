"""Embeddings of the selected columns (spec §5).

compat, as published:

* H (Local): thin SVD of the raw (uncentred) training block; training embeddings
  are the left singular vectors, other rows are projected with
  x · V_k · diag(1/(S_k + 1e-12)) (no rank truncation).
* D-pt (Global): least-squares coordinates in the global basis restricted to the
  selected columns, Π = pinv(Vt_full[:nc, sel]ᵀ)ᵀ, embedding = X[:, sel] · Π.

default (§20 item 11), on the centred block of a ``basis.TrainingBasis``:

* H: ``truncated_local`` — SVD truncated at numerical rank, U = X̃·Π exactly with
  Π = V/S (no 1e-12 blow-up along null directions, §18 item 23).
* D-pt: ``inductive_projection`` — Π = pinv(Vr[:nc, sel]ᵀ, rcond 1e-8)ᵀ in the
  inductive basis of the training rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from models.default.basis import RANK_RTOL, rank_truncation

__all__ = ["LocalBasis", "local_basis", "global_projection", "global_svd_vt", "truncated_local",
           "inductive_projection"]

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


def truncated_local(Bc_sel: np.ndarray, nc: int) -> Tuple[np.ndarray, np.ndarray]:
    """H embedding of the centred training block Bc_sel (m × s), rank k = min(numerical rank, nc).

    Returns (U (m, k) training embeddings, Π (s, k) = V_k / S_k) with Bc_sel · Π = U.
    """
    U, S, Vt = np.linalg.svd(Bc_sel, full_matrices=False)
    k = min(rank_truncation(S), nc)
    return U[:, :k], Vt[:k].T / S[:k]


def inductive_projection(Vr: np.ndarray, sel: np.ndarray, nc: int) -> np.ndarray:
    """D-pt projection Π = pinv(Vr[:nc, sel]ᵀ, rcond = RANK_RTOL)ᵀ → (|sel|, min(nc, r))."""
    return np.linalg.pinv(Vr[:nc, sel].T, rcond=RANK_RTOL).T
