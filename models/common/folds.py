"""Leave-one-model-out training sets, outer and inner (spec §9, §20 item 1).

A fold is keyed (R, i): the tuple of training rows R and the row i it predicts. The ``default``
drivers tune inside each outer fold by an inner LOOCV over R, whose folds are (R \\ {k}, k);
``loo_jobs`` lists every distinct (R, i) once, so a training set shared by several targets (or by
an outer and an inner fold) is fitted once.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

__all__ = ["FoldKey", "KFOLD_ABOVE", "KFOLD", "loo_training_set", "without", "loo_jobs", "kfold_sets"]

#: above this many training models, tuning (and ``pace fit``'s interval residuals) use K-fold instead of
#: leave-one-out: leave-one-out costs one training basis per model (an SVD and ranks of the whole
#: block), which at 100 models x 90k instances is ~100 x 4 s per fit.
KFOLD_ABOVE = 40
#: the K of those K-fold splits
KFOLD = 10

#: (training rows R ascending, predicted row i)
FoldKey = Tuple[Tuple[int, ...], int]


def loo_training_set(n: int, i: int, valid: np.ndarray) -> Tuple[int, ...]:
    """Rows j ≠ i of 0..n−1 with valid[j] (a model without a target value never trains)."""
    return tuple(j for j in range(n) if j != i and valid[j])


def without(R: Tuple[int, ...], k: int) -> Tuple[int, ...]:
    """R with row k removed (the inner training set of inner fold k)."""
    return tuple(j for j in R if j != k)


def loo_jobs(valid: Sequence[np.ndarray], nested: bool) -> Dict[FoldKey, List[int]]:
    """Every (R, i) an evaluation needs → the target indices that use it.

    valid: per target t an (n,) bool array (finite target value). Outer folds: (R_i, i) for every
    row i with R_i = ``loo_training_set(n, i, valid[t])``; with ``nested`` also the inner folds
    (R_i \\ {k}, k) for k in R_i.
    """
    jobs: Dict[FoldKey, List[int]] = {}
    for t, ok in enumerate(valid):
        n = ok.size
        for i in range(n):
            R = loo_training_set(n, i, ok)
            jobs.setdefault((R, i), []).append(t)
            if nested:
                for k in R:
                    jobs.setdefault((without(R, k), k), []).append(t)
    return jobs


def kfold_sets(rows, k: int = KFOLD) -> list[np.ndarray]:
    """``rows`` (in their order) dealt round-robin into min(k, len(rows)) held-out sets."""
    rows = np.asarray(rows, dtype=np.int64)
    k = max(1, min(int(k), rows.size))
    return [rows[j::k] for j in range(k)]
