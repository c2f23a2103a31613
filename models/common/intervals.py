"""Split-conformal interval offsets from held-out residuals. Pure numpy.

Used by ``pace fit`` (the stored intervals of a proxy, :mod:`warehouse.fit`) and by the ``anchors``
method (the interval of the sources prior a held-out model starts from, :mod:`warehouse.methods.anchors`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["interval_offsets"]


def interval_offsets(residuals: np.ndarray, level: float) -> tuple[float, float]:
    """Residual quantiles giving a central ``level`` interval for one new model.

    With n held-out residuals, the split-conformal correction uses the ceil((n + 1) p) / n order
    statistics instead of the plain p-quantiles, so a new model's residual (exchangeable with the
    n) falls inside with probability >= level; plain quantiles under-cover at n ~ 13.
    """
    r = np.sort(residuals[np.isfinite(residuals)])
    n = r.size
    if n == 0:
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    lo_k = int(np.floor((n + 1) * tail)) - 1           # 0-based order statistic, -1: below the minimum
    hi_k = int(np.ceil((n + 1) * (1 - tail))) - 1
    lo = r[lo_k] if lo_k >= 0 else r[0] - (r[-1] - r[0])      # too few residuals: widen past the range
    hi = r[hi_k] if hi_k < n else r[-1] + (r[-1] - r[0])
    return float(lo), float(hi)
