"""Tuning grids and auto-tune sweeps (spec §9.1–§9.3, §20 items 1–2).

Goal A sweeps are vectorised: every configuration's LOOCV prediction vector is a
convex mix of cached H and D-pt prediction vectors, all configurations are
scored at once with the objective 100·MAE − Spearman, and the winner is the
first minimum in loop order (== the published strict ``<`` replacement; a NaN
score never wins).

Grids: the published ones (``Q_GRID``, ``M_GRID``, ``nc_grid``; loop orders
``strict_configs`` §9.1, ``nonstrict_configs`` §9.2, ``pair_sweep_configs`` §9.3)
and the ``default`` method's smaller ones (``DefaultGrid`` for Goal A, ``PairGrid``
for Goal B) with their selection rules (``tuning_objective``, ``best_pair_config``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence, Tuple

import numpy as np

from models.common.configs import AbsConfig, DefaultPairConfig
from models.common.metrics import abs_objective, rowwise_spearman, sym_accuracy, sym_logloss
from models.common.regress import mix_configs
from models.common.selection import split_budget

__all__ = [
    "Q_GRID",
    "M_GRID",
    "nc_grid",
    "strict_configs",
    "nonstrict_configs",
    "pair_sweep_configs",
    "SweepResult",
    "first_best",
    "strict_sweep",
    "nonstrict_sweep",
    "DefaultGrid",
    "tuning_objective",
    "PairGrid",
    "best_pair_config",
]

Q_GRID: Tuple[float, ...] = tuple(float(f"0.{i}") if i < 10 else 1.0 for i in range(11))
M_GRID: Tuple[float, ...] = Q_GRID


def nc_grid(nc_max: int = 10) -> Tuple[int, ...]:
    return tuple(range(1, int(nc_max) + 1))


def strict_configs(q_grid: Sequence[float], ncs: Sequence[int], m_grid: Sequence[float]) -> np.ndarray:
    """§9.1 loop order q → nc_d → m → nc_h with skips; (K, 4) int index array
    of (q_idx, nc_d_idx, m_idx, nc_h_idx)."""
    rows = []
    for qi, q in enumerate(q_grid):
        for di, _ in enumerate(ncs):
            for mi, m in enumerate(m_grid):
                if q == 0.0 and m > 0.0:
                    continue
                if q == 1.0 and m < 1.0:
                    continue
                for hi, _ in enumerate(ncs):
                    if m == 0.0 and hi != 0:
                        continue
                    rows.append((qi, di, mi, hi))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 4)


def nonstrict_configs(q_grid: Sequence[float], ncs: Sequence[int], m_grid: Sequence[float],
                      C: int) -> np.ndarray:
    """§9.2 loop order q → m → nc_h → nc_d with skips; (K, 4) int array of
    (q_idx, m_idx, nc_h_idx, nc_d_idx)."""
    rows = []
    for qi, q in enumerate(q_grid):
        c_l, c_g = split_budget(C, q)
        for mi, m in enumerate(m_grid):
            if m > 0.0 and c_l == 0:
                continue
            if m < 1.0 and c_g == 0:
                continue
            for hi, _ in enumerate(ncs):
                if m == 0.0 and hi != 0:
                    continue
                for di, _ in enumerate(ncs):
                    if m == 1.0 and di != 0:
                        continue
                    rows.append((qi, mi, hi, di))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 4)


@dataclass(frozen=True)
class SweepResult:
    """Winner of a sweep: index into the config list, its config values,
    its prediction vector (n,) and objective score; ``scores`` (K,) all scores."""

    index: int
    q: float
    m: float
    nc_h: int
    nc_d: int
    pred: np.ndarray
    score: float
    scores: np.ndarray


def first_best(scores: np.ndarray) -> int:
    """Index of the first minimum, NaN never wins (0 when all NaN)."""
    s = np.where(np.isnan(scores), np.inf, scores)
    i = int(np.argmin(s))
    return i


def _winner(qi, mi, hi, di, Hp: np.ndarray, Dp: np.ndarray, y: np.ndarray, q_grid, ncs, m_grid
            ) -> SweepResult:
    """Score the K configs (index arrays qi, mi, hi, di; Hp, Dp: (K, n)) and pick the first best."""
    mv = np.asarray(m_grid, dtype=np.float64)[mi]
    P = mix_configs(mv, Hp, Dp)
    scores = abs_objective(P, y)
    i = first_best(scores)
    return SweepResult(index=i, q=float(q_grid[qi[i]]), m=float(m_grid[mi[i]]), nc_h=int(ncs[hi[i]]),
                       nc_d=int(ncs[di[i]]), pred=P[i], score=float(scores[i]), scores=scores)


def strict_sweep(H: np.ndarray, D: np.ndarray, y: np.ndarray,
                 q_grid: Sequence[float] = Q_GRID, ncs: Sequence[int] = nc_grid(10),
                 m_grid: Sequence[float] = M_GRID) -> SweepResult:
    """§9.1 strict sweep for one target.

    H: (Q, ND, NH, n) LOOCV H predictions for (q, nc_d, nc_h);
    D: (Q, ND, n) LOOCV D-pt predictions for (q, nc_d); y: (n,) truth.
    """
    qi, di, mi, hi = strict_configs(q_grid, ncs, m_grid).T
    return _winner(qi, mi, hi, di, H[qi, di, hi], D[qi, di], y, q_grid, ncs, m_grid)


def nonstrict_sweep(H: np.ndarray, D: np.ndarray, y: np.ndarray, C: int,
                    q_grid: Sequence[float] = Q_GRID, ncs: Sequence[int] = nc_grid(10),
                    m_grid: Sequence[float] = M_GRID) -> SweepResult:
    """§9.2 non-strict sweep for one target.

    H: (Q, NH, n) LOOCV H predictions with top-C_L(q) columns and nc_h;
    D: (Q, ND, n) LOOCV D-pt predictions with top-C_G(q) columns and nc_d
    (entries for an empty side are ignored by the skips).
    """
    qi, mi, hi, di = nonstrict_configs(q_grid, ncs, m_grid, C).T
    return _winner(qi, mi, hi, di, H[qi, hi], D[qi, di], y, q_grid, ncs, m_grid)


def pair_sweep_configs(ncs: Sequence[int], m_grid: Sequence[float]) -> np.ndarray:
    """§9.3 loop (single dummy q, both sides full C): m → nc_h → nc_d with the skips
    nc_h ≠ first when m = 0, nc_d ≠ first when m = 1. (K, 3) (m_idx, nc_h_idx, nc_d_idx)."""
    rows = []
    for mi, m in enumerate(m_grid):
        for hi in range(len(ncs)):
            if m == 0.0 and hi != 0:
                continue
            for di in range(len(ncs)):
                if m == 1.0 and di != 0:
                    continue
                rows.append((mi, hi, di))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


# --------------------------------------------------------------------------- the default grids
@dataclass(frozen=True)
class DefaultGrid:
    """Goal A grid of the ``default`` method (§20 item 2): 492 configs with the §9.1 skips."""

    q: Tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    nc: Tuple[int, ...] = (1, 2, 3, 4, 6, 8)
    m: Tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)

    def configs(self) -> np.ndarray:
        """(K, 4) (q_idx, nc_d_idx, m_idx, nc_h_idx) in §9.1 loop order with skips."""
        return strict_configs(self.q, self.nc, self.m)

    def _at(self, row) -> AbsConfig:
        qi, di, mi, hi = row
        return AbsConfig(m=float(self.m[mi]), nc_h=int(self.nc[hi]), nc_d=int(self.nc[di]),
                         q=float(self.q[qi]))

    def config(self, k: int) -> AbsConfig:
        """The k-th config (row k of ``configs()``)."""
        return self._at(self.configs()[k])

    def index(self, cfg: AbsConfig) -> int:
        """Row of ``cfg`` in ``configs()`` (KeyError when it is not in the grid)."""
        for k, row in enumerate(self.configs()):
            if self._at(row) == cfg:
                return k
        raise KeyError(cfg)


def tuning_objective(P: np.ndarray, y: np.ndarray, rank_weight: float = 1.0) -> np.ndarray:
    """100·MAE − rank_weight·Spearman per row of P (K, n) vs y (n,) (rank_weight 1: the §9 objective)."""
    if rank_weight == 1.0:
        return abs_objective(P, y)
    return abs_objective(P, y) + (1.0 - rank_weight) * rowwise_spearman(P, y)


@dataclass(frozen=True)
class PairGrid:
    """Goal B grid of the ``default`` method: 36 configs, loop order q → nc → m."""

    q: Tuple[float, ...] = (0.25, 0.5, 0.75)
    nc: Tuple[int, ...] = (1, 2, 3, 4)
    m: Tuple[float, ...] = (0.0, 0.5, 1.0)

    def configs(self) -> List[DefaultPairConfig]:
        """Loop order q → nc → m."""
        return [DefaultPairConfig(q, nc, m) for q in self.q for nc in self.nc for m in self.m]


def best_pair_config(M: np.ndarray, y: np.ndarray) -> int:
    """Index of the best of K configs from their directed margins M (K, n, n) and truth y (n,)
    (NaN = not evaluated): maximal averaged-pair accuracy, ties → lower log-loss, then grid order."""
    acc, _, _ = sym_accuracy(M, y)
    ll = sym_logloss(M, y)
    acc = np.where(np.isnan(acc), -np.inf, acc)
    best = np.flatnonzero(acc == acc.max())
    return int(best[np.argmin(ll[best])])
