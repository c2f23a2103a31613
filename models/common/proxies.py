"""Fitted proxies in their stored, exactly linear form (what ``pace fit`` keeps as rows).

* ``LinearProxy`` — default Goal A: ŷ(z) = clip(intercept + Σ weight·(x_z[col] − centre), lo, hi).
* ``PairLinear`` — compat Goal B (§14.1): margin(k vs j) = Σ weight·(X[k, col] − X[j, col]).
* ``PairProxy`` — default Goal B: the same margin on scores imputed by the training centre.

Win probabilities are σ(a·margin + b) (Platt, ``calibration``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from models.common.configs import AbsConfig, DefaultPairConfig, PairConfig
from models.common.special import expit

__all__ = ["LinearProxy", "PairLinear", "PairProxy"]


@dataclass
class LinearProxy:
    """Stored predictor of one target: ŷ(z) = clip(intercept + Σ weight·(x_z[col] − centre), lo, hi).

    cols: (k,) indices into the columns of X (ascending); weight, centre: (k,);
    multiplicity: (k,) size of each column's duplicate group in the training
    block; side: (k,) 'H', 'D' or 'HD'; config: the AbsConfig used.
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    centre: np.ndarray
    intercept: float
    lo: float
    hi: float
    config: AbsConfig
    multiplicity: np.ndarray
    side: np.ndarray
    trained_on: List[str] = field(default_factory=list)
    fill: Optional[np.ndarray] = None
    missing: str = "mask"

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X: (h, S) raw scores (NaN = missing → ``fill`` when set, else the centre)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        A = X[:, self.cols]
        if self.fill is not None:
            A = np.where(np.isnan(A), self.fill, A)
        D = A - self.centre
        D = np.where(np.isnan(D), 0.0, D)
        return np.clip(self.intercept + D @ self.weight, self.lo, self.hi)


@dataclass
class PairLinear:
    """Linear pair proxy of one target (§14.1 Goal B form).

    cols: (k,) ascending indices into X; weight: (k,) so that
    margin(k vs j) = Σ weight·(X[k, cols] − X[j, cols]); p_win = σ(a·margin + b).
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    a: float
    b: float
    config: PairConfig

    def margin(self, xk: np.ndarray, xj: np.ndarray) -> np.ndarray:
        """xk, xj: (h, S) or (S,) rows → (h,) margins."""
        xk = np.atleast_2d(np.asarray(xk, dtype=np.float64))
        xj = np.atleast_2d(np.asarray(xj, dtype=np.float64))
        return (xk[:, self.cols] - xj[:, self.cols]) @ self.weight

    def margins(self, X: np.ndarray) -> np.ndarray:
        """All pairs of the rows of X: (n, n) with entry [k, j] = margin(k vs j)."""
        s = np.asarray(X, dtype=np.float64)[:, self.cols] @ self.weight
        return s[:, None] - s[None, :]


@dataclass
class PairProxy:
    """Stored default pair predictor of one target.

    cols: (k,) ascending indices into the columns of X; weight: (k,); centre: (k,) training
    column means (imputation of a missing score); margin(k, j) = Σ weight·(x̃_k − x̃_j);
    p_win(k, j) = σ(a·margin + b). multiplicity: size of each column's duplicate group.
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    centre: np.ndarray
    a: float
    b: float
    config: DefaultPairConfig
    multiplicity: np.ndarray
    trained_on: List[str] = field(default_factory=list)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """X: (h, S) raw scores (NaN → centre) → (h,) linear scores s, margin = s_k − s_j."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        D = X[:, self.cols] - self.centre
        D = np.where(np.isnan(D), 0.0, D)
        return D @ self.weight

    def margins(self, X: np.ndarray) -> np.ndarray:
        s = self.scores(X)
        return s[:, None] - s[None, :]

    def prob(self, X: np.ndarray) -> np.ndarray:
        return expit(self.a * self.margins(X) + self.b)
