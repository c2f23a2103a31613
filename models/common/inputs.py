"""The drivers' array inputs: checks, conversions, target means and missing-score treatment.

compat takes X (n × S float64, the §2.4-filtered source matrix, zeros for missing), Y (n × T
target means) and P (per target an n × N_t float32 matrix); ``default`` takes raw X (NaN =
missing) and P (NaN = missing instance) and derives Y from P. P is a list in ``targets`` order or
a dict target → matrix.
"""
from __future__ import annotations

from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

from models.common.embeddings import global_svd_vt
from models.common.selection import leverage_table

__all__ = ["target_means", "compat_inputs", "default_inputs", "MISSING_MODES", "missing_treatments",
           "fill_missing"]

#: missing-score treatments of ``default``: masked (mean-imputed, coverage rule) or a failure (0)
MISSING_MODES = ("mask", "zero")


def target_means(P: np.ndarray) -> np.ndarray:
    """Mean over observed instances per row; NaN when a row has no observed instance."""
    P = np.asarray(P, dtype=np.float64)
    obs = ~np.isnan(P)
    cnt = obs.sum(axis=1)
    s = np.where(obs, P, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


def _per_target(P, targets: Sequence[str], dtype) -> List[np.ndarray]:
    if isinstance(P, Mapping):
        return [np.asarray(P[t], dtype=dtype) for t in targets]
    return [np.asarray(p, dtype=dtype) for p in P]


def compat_inputs(X, Y, P, targets: Sequence[str], nc_max: int, Vt: Optional[np.ndarray]):
    """→ (X float64 contiguous, Y, P list of float32, Vt, leverage table for nc = 1..nc_max).

    Vt: (r, S) global basis (default: one SVD of X, §2.5). ValueError on inconsistent shapes.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.asarray(Y)
    n = X.shape[0]
    Pl = _per_target(P, targets, np.float32)
    if Y.shape != (n, len(targets)) or len(Pl) != len(targets):
        raise ValueError("Y must be (n, T) and P must have one matrix per target")
    if Vt is None:
        Vt = global_svd_vt(X)
    lev = leverage_table(Vt, nc_max)
    return X, Y, Pl, Vt, lev


def default_inputs(X, P, targets: Sequence[str]) -> Tuple[np.ndarray, List[np.ndarray], np.ndarray]:
    """→ (X float64 contiguous, P list of float64, Y (n, T) observed-instance target means).

    A target without instances gives a NaN column. ValueError unless P has one matrix per target.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Pl = _per_target(P, targets, np.float64)
    if len(Pl) != len(targets):
        raise ValueError("P must have one matrix per target")
    Y = np.stack([target_means(p) if p.shape[1] else np.full(X.shape[0], np.nan) for p in Pl], axis=1)
    return X, Pl, Y


def missing_treatments(missing: str) -> Tuple[str, ...]:
    """The treatments a ``missing=`` value tries: 'mask', 'zero', or both for 'auto'."""
    if missing == "auto":
        return MISSING_MODES
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be 'mask', 'zero' or 'auto', not {missing!r}")
    return (missing,)


def fill_missing(X: np.ndarray, treatment: str) -> np.ndarray:
    """X as the treatment sees it: unchanged for 'mask' (NaN stays missing), NaN → 0 for 'zero'."""
    return X if treatment == "mask" else np.where(np.isnan(X), 0.0, X)
