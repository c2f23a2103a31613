"""Portable emulation of numpy's classic (non-SIMD) introsort ``argsort``.

Why: the published pipeline orders selection scores with numpy's default
(unstable) ``argsort`` and reverses it. Exact ties among float32 scores are
common, so the selected columns depend on how that sort orders ties. Recent
numpy versions dispatch ``argsort`` to CPU-specific SIMD sorts (AVX2 / AVX-512)
whose tie order differs from the classic median-of-3 introsort used where no
SIMD sort applies (which produced the reference outputs). This module
reproduces the classic algorithm's result on any CPU, vectorised with numpy:

* partition step (median of 3 of first/middle/last, pivot parked at r-1,
  Hoare-style scan that stops on equal keys): the k-th left stop (first
  positions with key ≥ pivot) is exchanged with the k-th right stop (keys ≤
  pivot, scanning down) while they have not crossed — computed in one shot;
* segments of ≤ 16 elements: insertion sort with strict ``<`` == a stable
  sort of the segment in its current order;
* depth limit 2·msb(n), checked when a deferred segment is resumed, with a
  heap sort fallback;
* only segments that intersect the requested top-k tail are processed
  (segments wholly below it cannot move elements into it), so the top-k
  tail of the full ascending argsort costs O(n + k log k).

Only the *ascending* order is emulated; ``top_desc`` reverses its tail.
Keys are compared with ``<`` (NaN sorts last, like numpy).
"""
from __future__ import annotations

import numpy as np

__all__ = ["introsort_argsort", "introsort_argsort_tail", "top_desc"]

_SMALL = 15


def _less(a, b):
    # numpy float "less": NaN is largest
    return a < b or (b != b and a == a)


def _sift_down(a, vals, i, end):
    """Sift the 1-based heap entry at ``i`` down within ``a[1..end]`` (numpy's classic aheapsort step)."""
    tmp = a[i]
    j = i << 1
    while j <= end:
        if j < end and _less(vals[a[j]], vals[a[j + 1]]):
            j += 1
        if _less(vals[tmp], vals[a[j]]):
            a[i] = a[j]
            i = j
            j += j
        else:
            break
    a[i] = tmp


def _heapsort(v, idx, pl, n):
    a = idx[pl:pl + n].tolist()
    a.insert(0, None)  # 1-based
    for start in range(n >> 1, 0, -1):          # build the heap
        _sift_down(a, v, start, n)
    for m in range(n, 1, -1):                   # move the largest behind the heap, restore it
        a[m], a[1] = a[1], a[m]
        _sift_down(a, v, 1, m - 1)
    idx[pl:pl + n] = a[1:]


def _lt(x, y):
    """Vectorised numpy-style less with NaN last (x array, y scalar or array)."""
    return (x < y) | ((y != y) & (x == x))


def introsort_argsort_tail(v: np.ndarray, k: int) -> np.ndarray:
    """Last ``k`` entries of the classic-introsort ascending ``argsort(v)``.

    v: (n,) float array. Returns (min(k, n),) int64 positions, equal to
    ``np.argsort(v)[n-k:]`` of a numpy build that uses the classic introsort.
    """
    v = np.asarray(v)
    n = v.size
    k = min(int(k), n)
    idx = np.arange(n, dtype=np.int64)
    if n <= 1 or k <= 0:
        return idx[n - k:]
    lo = n - k  # region of interest [lo, n-1]
    vl = v  # values by original position
    # stack items: (pl, pr, cdepth, resumed)
    stack = [(0, n - 1, (n.bit_length() - 1) * 2, True)]
    while stack:
        pl, pr, cdepth, resumed = stack.pop()
        if pr < lo:
            continue
        if resumed and cdepth < 0:
            _heapsort(vl, idx, pl, pr - pl + 1)
            continue
        while pr - pl > _SMALL:
            pm = pl + ((pr - pl) >> 1)
            a, b = idx[pl], idx[pm]
            if _less(vl[b], vl[a]):
                idx[pl], idx[pm] = b, a
            a, b = idx[pm], idx[pr]
            if _less(vl[b], vl[a]):
                idx[pm], idx[pr] = b, a
            a, b = idx[pl], idx[pm]
            if _less(vl[b], vl[a]):
                idx[pl], idx[pm] = b, a
            vp = vl[idx[pm]]
            idx[pm], idx[pr - 1] = idx[pr - 1], idx[pm]
            seg = vl[idx[pl:pr]]  # positions pl .. pr-1
            # left stops: positions pl+1..pr-1 with not (v < vp)
            L = np.flatnonzero(~_lt(seg[1:], vp)) + (pl + 1)
            # right stops: positions pr-2 .. pl (descending) with not (vp < v)
            R = (np.flatnonzero(~_lt(vp, seg[:-1])) + pl)[::-1]
            m = min(L.size, R.size)
            K = int(np.count_nonzero(L[:m] < R[:m]))
            if K:
                Lk, Rk = L[:K], R[:K]
                tmp = idx[Lk].copy()
                idx[Lk] = idx[Rk]
                idx[Rk] = tmp
                pi = int(min(L[K], R[K - 1]))
            else:
                pi = int(L[0])
            idx[pi], idx[pr - 1] = idx[pr - 1], idx[pi]
            cdepth -= 1
            if pi - pl < pr - pi:
                stack.append((pi + 1, pr, cdepth, True))
                pr = pi - 1
            else:
                stack.append((pl, pi - 1, cdepth, True))
                pl = pi + 1
            if pr < lo:
                break
        else:
            if pr > pl:
                s = idx[pl:pr + 1]
                idx[pl:pr + 1] = s[np.argsort(vl[s], kind="stable")]
    return idx[lo:]


def introsort_argsort(v: np.ndarray) -> np.ndarray:
    """Full classic-introsort ascending argsort of v (n,) → (n,) int64."""
    v = np.asarray(v)
    return introsort_argsort_tail(v, v.size)


def top_desc(scores: np.ndarray, k: int) -> np.ndarray:
    """First k entries of ``introsort_argsort(scores)[::-1]`` (best first)."""
    return introsort_argsort_tail(scores, k)[::-1]
