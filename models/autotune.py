"""Auto-tune sweeps of the Goal A hyper-parameters (spec §9.1, §9.2).

The sweeps are vectorised: every configuration's LOOCV prediction vector is a
convex mix of cached H and D-pt prediction vectors, all configurations are
scored at once with the objective 100·MAE − Spearman, and the winner is the
first minimum in loop order (== the published strict ``<`` replacement; a NaN
score never wins).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

from .metrics import abs_objective
from .selection import split_budget

__all__ = [
    "Q_GRID",
    "M_GRID",
    "nc_grid",
    "strict_configs",
    "nonstrict_configs",
    "SweepResult",
    "first_best",
    "strict_sweep",
    "nonstrict_sweep",
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


def _mix_rows(m: np.ndarray, Hp: np.ndarray, Dp: np.ndarray) -> np.ndarray:
    m = m[:, None]
    out = m * Hp + (1.0 - m) * Dp
    out = np.where(m == 0.0, Dp, out)
    return np.where(m == 1.0, Hp, out)


def strict_sweep(H: np.ndarray, D: np.ndarray, y: np.ndarray,
                 q_grid: Sequence[float] = Q_GRID, ncs: Sequence[int] = nc_grid(10),
                 m_grid: Sequence[float] = M_GRID) -> SweepResult:
    """§9.1 strict sweep for one target.

    H: (Q, ND, NH, n) LOOCV H predictions for (q, nc_d, nc_h);
    D: (Q, ND, n) LOOCV D-pt predictions for (q, nc_d); y: (n,) truth.
    """
    cfg = strict_configs(q_grid, ncs, m_grid)
    mv = np.asarray(m_grid, dtype=np.float64)[cfg[:, 2]]
    Hp = H[cfg[:, 0], cfg[:, 1], cfg[:, 3]]
    Dp = D[cfg[:, 0], cfg[:, 1]]
    P = _mix_rows(mv, Hp, Dp)
    scores = abs_objective(P, y)
    i = first_best(scores)
    qi, di, mi, hi = cfg[i]
    return SweepResult(index=i, q=float(q_grid[qi]), m=float(m_grid[mi]), nc_h=int(ncs[hi]),
                       nc_d=int(ncs[di]), pred=P[i], score=float(scores[i]), scores=scores)


def nonstrict_sweep(H: np.ndarray, D: np.ndarray, y: np.ndarray, C: int,
                    q_grid: Sequence[float] = Q_GRID, ncs: Sequence[int] = nc_grid(10),
                    m_grid: Sequence[float] = M_GRID) -> SweepResult:
    """§9.2 non-strict sweep for one target.

    H: (Q, NH, n) LOOCV H predictions with top-C_L(q) columns and nc_h;
    D: (Q, ND, n) LOOCV D-pt predictions with top-C_G(q) columns and nc_d
    (entries for an empty side are ignored by the skips).
    """
    cfg = nonstrict_configs(q_grid, ncs, m_grid, C)
    mv = np.asarray(m_grid, dtype=np.float64)[cfg[:, 1]]
    Hp = H[cfg[:, 0], cfg[:, 2]]
    Dp = D[cfg[:, 0], cfg[:, 3]]
    P = _mix_rows(mv, Hp, Dp)
    scores = abs_objective(P, y)
    i = first_best(scores)
    qi, mi, hi, di = cfg[i]
    return SweepResult(index=i, q=float(q_grid[qi]), m=float(m_grid[mi]), nc_h=int(ncs[hi]),
                       nc_d=int(ncs[di]), pred=P[i], score=float(scores[i]), scores=scores)
