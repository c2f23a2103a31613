"""Instance selection kernels (spec §4).

Scores are computed from training rows only; orderings are explicit index
arrays so that the ``default`` method can plug in another ordering key
(e.g. a stable lexicographic order) while ``compat`` reproduces the published
"ascending default-kind argsort, then reversed" rule (``compat_order``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from models.common.introsort import top_desc

__all__ = [
    "order_desc",
    "order_desc_stable",
    "OrderFn",
    "compat_order",
    "native_order",
    "local_scores",
    "leverage",
    "leverage_table",
    "global_scores",
    "h_top",
    "dpt_top",
    "py_round",
    "split_budget",
    "StrictSelection",
    "strict_prefix_length",
    "strict_joint_select",
    "positions",
    "prefix_ranks",
]


def order_desc(scores: np.ndarray, k: Optional[int] = None, kind: Optional[str] = "introsort") -> np.ndarray:
    """Published ordering: ascending default-kind argsort, then reversed.

    scores: (p,). Returns the first k (default all) indices, best first.
    kind "introsort" (default) = portable emulation of numpy's classic
    introsort (the sort that produced the reference outputs, identical on
    every CPU, see ``introsort``); any other value (None, "quicksort",
    "stable", ...) is passed to ``np.argsort`` (None = this numpy build's
    default, which may be a CPU-specific SIMD sort with another tie order).
    """
    p = scores.size
    k = p if k is None else min(int(k), p)
    if kind == "introsort":
        return top_desc(scores, k)
    return np.argsort(scores, kind=kind)[::-1][:k]


def order_desc_stable(scores: np.ndarray, k: Optional[int] = None) -> np.ndarray:
    """Deterministic descending order, ties broken by ascending column index (first k).

    With k < p only the k best are sorted (a partition finds them: ~p instead of p·log p at p ~ 10^5);
    the result is the prefix of the full order, ties at the cut included."""
    s = np.asarray(scores)
    neg = -s
    if k is None or k >= s.size or k <= 0 or np.isnan(neg).any():
        return np.lexsort((np.arange(s.size), neg))[:k]
    cut = neg[np.argpartition(neg, k - 1)[:k]].max()
    candidates = np.flatnonzero(neg <= cut)        # ascending: a stable sort keeps ties in column order
    return candidates[np.argsort(neg[candidates], kind="stable")][:k]


#: order_fn(scores (p,), k) -> at least the first k column indices, best first
OrderFn = Callable[[np.ndarray, int], np.ndarray]


def compat_order(scores: np.ndarray, k: int) -> np.ndarray:
    """Published ordering (ascending classic-introsort argsort, reversed), first k."""
    return order_desc(scores, k, kind="introsort")


def native_order(scores: np.ndarray, k: int) -> np.ndarray:
    """Ascending argsort of *this* numpy build (may be a SIMD sort), reversed, first k."""
    return order_desc(scores, k, kind=None)


def local_scores(r: np.ndarray) -> np.ndarray:
    """§4.1 Local/H score |r_s| (keeps r's dtype, float32 in compat)."""
    return np.abs(r)


def leverage(Vt_full: np.ndarray, nc: int) -> np.ndarray:
    """§4.2 lev_nc(s) = Σ_{c<nc} Vt_full[c, s]² ; Vt_full (r × p) → (p,) float64."""
    V = Vt_full[:nc]
    return (V * V).sum(axis=0)


def leverage_table(Vt_full: np.ndarray, nc_max: int) -> np.ndarray:
    """lev_nc for nc = 1..nc_max: (nc_max, p); row nc-1 = ``leverage(Vt_full, nc)``.

    Uses the same summation as ``leverage`` (not a cumulative sum) so every
    row is bit-identical to the direct formula.
    """
    return np.stack([leverage(Vt_full, nc) for nc in range(1, nc_max + 1)])


def global_scores(lev: np.ndarray, r: np.ndarray) -> np.ndarray:
    """§4.2 D-pt score lev(s)·|r_s| (float64 when lev is float64)."""
    return lev * np.abs(r)


def h_top(order: np.ndarray, M: int) -> np.ndarray:
    """First M indices of the H order, in rank order (not sorted)."""
    return order[:M]


def dpt_top(order: np.ndarray, N: int) -> np.ndarray:
    """First N indices of the D-pt order, sorted ascending."""
    return np.sort(order[:N])


def py_round(x: float) -> int:
    """Python ``round`` (half to even on the float64 value)."""
    return int(round(float(x)))


def split_budget(C: int, q: Optional[float]) -> Tuple[int, int]:
    """§4.3 non-strict split: q None → (C, C); else (round(q·C), C − round(q·C))."""
    if q is None:
        return C, C
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError("q must lie in [0, 1]")
    c_l = py_round(q * C)
    return c_l, C - c_l


@dataclass(frozen=True)
class StrictSelection:
    """Result of §4.4. H, D: ascending index arrays; |H ∪ D| = C (capped).

    h_rank / d_rank: position of each selected column in its side's order
    (aligned with H / D).
    """

    H: np.ndarray
    D: np.ndarray
    h_rank: np.ndarray
    d_rank: np.ndarray


def strict_prefix_length(C: int, p: int) -> int:
    """Length of the order prefix that ``strict_joint_select`` can ever read: min(p, 3C + 2).

    A side's pointer passes at most init + needed + |U| ≤ 3C entries.
    """
    return min(int(p), 3 * int(C) + 2)


def strict_joint_select(order_h: np.ndarray, order_d: np.ndarray, C: int, q: float,
                        p: Optional[int] = None) -> StrictSelection:
    """§4.4 strict joint budget: |H ∪ D| = C exactly.

    order_h, order_d: orders of the H and D-pt scores, best first — full
    permutations of the p columns or prefixes of length ≥
    ``strict_prefix_length(C, p)``. C: budget (capped at p). q: share of the
    budget for H (Python rounding). Overlap columns stay in both sets; growth
    fills the remaining budget with the shortfall rule (equal shortfall: H
    goes when a_h ≤ a_d).
    """
    p = int(order_h.size) if p is None else int(p)
    C = min(int(C), p)
    q = float(q)
    init_h = py_round(q * C)
    init_d = C - init_h
    lim = strict_prefix_length(C, p)
    if order_h.size < lim or order_d.size < lim:
        raise ValueError("order prefixes shorter than strict_prefix_length(C, p)")
    oh = order_h[:lim].tolist()
    od = order_d[:lim].tolist()
    H = oh[:init_h]
    D = od[:init_d]
    hr = list(range(init_h))
    dr = list(range(init_d))
    U = set(H)
    U.update(D)
    needed = C - len(U)
    if needed > 0:
        target_h = py_round(q * needed)
        target_d = needed - target_h
        p_h, p_d = init_h, init_d
        a_h = a_d = 0
        ex_h = ex_d = False
        while a_h + a_d < needed:
            if ex_h and ex_d:
                break
            if ex_h:
                side_h = False
            elif ex_d:
                side_h = True
            else:
                sh = max(target_h - a_h, 0)
                sd = max(target_d - a_d, 0)
                if sh > sd:
                    side_h = True
                elif sd > sh:
                    side_h = False
                else:
                    side_h = a_h <= a_d
            if side_h:
                while p_h < lim and oh[p_h] in U:
                    p_h += 1
                if p_h >= lim:
                    ex_h = True
                    continue
                c = oh[p_h]
                H.append(c)
                hr.append(p_h)
                U.add(c)
                p_h += 1
                a_h += 1
            else:
                while p_d < lim and od[p_d] in U:
                    p_d += 1
                if p_d >= lim:
                    ex_d = True
                    continue
                c = od[p_d]
                D.append(c)
                dr.append(p_d)
                U.add(c)
                p_d += 1
                a_d += 1
    Ha = np.asarray(H, dtype=np.int64)
    Da = np.asarray(D, dtype=np.int64)
    ih = np.argsort(Ha, kind="stable")
    idd = np.argsort(Da, kind="stable")
    return StrictSelection(
        H=Ha[ih], D=Da[idd],
        h_rank=np.asarray(hr, dtype=np.int64)[ih], d_rank=np.asarray(dr, dtype=np.int64)[idd],
    )


def positions(order: np.ndarray) -> np.ndarray:
    """Inverse permutation: positions(order)[col] = rank of col in ``order``."""
    inv = np.empty_like(order)
    inv[order] = np.arange(order.size, dtype=order.dtype)
    return inv


def prefix_ranks(order: np.ndarray, cols: Sequence[int], C: int) -> np.ndarray:
    """Rank of each of ``cols`` among the first 3C + 2 entries of ``order`` (−1 when not there)
    → (len(cols),) int64; the strict selection never reads further (``strict_prefix_length``)."""
    pos = {int(c): r for r, c in enumerate(order[: 3 * C + 2])}
    return np.asarray([pos.get(int(c), -1) for c in cols], dtype=np.int64)
