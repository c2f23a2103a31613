"""Nested auto-tune for the ``compat`` pipeline (spec §9.4, §20 item 1).

``loocv_abs_autotune_nested``: for every outer fold i, the §9.1 strict
auto-tune (``models.compat.goal_a.loocv_abs_autotune``) is run on the n − 1 training
models only — an inner LOOCV in which the held-out model i does not exist (its
rows are removed from X, Y and P, so the inner runs use a global SVD of the
n − 1 training rows, exactly what the published code would compute if handed
those models, and inner fold seeds seed + 997·k' + 31·t with k' the position in
the reduced model list). The per-target config it picks then predicts model i
with the ordinary compat outer fold (Vt_full from all n rows, the §2.4 column
filter of the caller, seed + 997·i + 31·t, B replicates) — so everything that
is compat stays compat (zeros for missing data, transductive basis); only the
tuning is honest. Like the other compat Goal A drivers it keeps the caller's
BLAS threading (see ``models.compat.goal_a``).

Cost: n inner auto-tunes. ``inner_B`` (default = B) can be lowered to trade
bootstrap noise in the inner objective for speed; the outer prediction
always uses ``B``. The published grids are used unless given.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from models.common.autotune import M_GRID
from models.compat.goal_a import loocv_abs_autotune
from models.compat.goal_a_fold import frozen_folds
from models.common.configs import AbsConfig
from models.common.inputs import compat_inputs
from models.common.metrics import metrics_table
from models.common.results import AbsResult, FoldSelection, model_names
from models.common.selection import OrderFn, compat_order, leverage_table

__all__ = ["loocv_abs_autotune_nested"]


def loocv_abs_autotune_nested(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
                              models: Optional[Sequence[str]] = None, count: int = 100,
                              B: int = 300, seed: int = 42, inner_B: Optional[int] = None,
                              q_grid: Optional[Sequence[float]] = None, nc_max: int = 10,
                              m_grid: Sequence[float] = M_GRID,
                              Vt_full: Optional[np.ndarray] = None,
                              order_fn: OrderFn = compat_order, n_jobs: int = 1) -> AbsResult:
    """Nested-LOOCV ``abs --strict-budget --auto-tune``.

    Inputs as ``loocv_abs_autotune`` (X: (n, S) filtered float64, Y: (n, T),
    P: per target (n, N_t) float32). Returns an ``AbsResult`` (mode
    "loocv-autotune-nested"); ``configs`` holds the config chosen most often
    over the folds, ``sweep[f"{target}@{i}"]`` the inner objective of fold i's
    winner, and ``warnings`` lists every fold's chosen config.
    """
    X, Y, Pl, Vt, lev = compat_inputs(X, Y, P, targets, nc_max, Vt_full)
    n = X.shape[0]
    T = len(targets)
    iB = B if inner_B is None else int(inner_B)
    preds = np.zeros((n, T))
    sels: List[FoldSelection] = []
    fold_cfg: Dict[Tuple[int, str], AbsConfig] = {}
    sweep: Dict[str, float] = {}
    for i in range(n):
        train = np.asarray([j for j in range(n) if j != i])
        inner = loocv_abs_autotune(X[train], Y[train], [p[train] for p in Pl], targets,
                                   count=count, B=iB, seed=seed, q_grid=q_grid, nc_max=nc_max,
                                   m_grid=m_grid, order_fn=order_fn, n_jobs=n_jobs)
        configs = dict(inner.configs)
        for t in targets:
            fold_cfg[(i, t)] = configs[t]
            sweep[f"{t}@{i}"] = float(inner.sweep[t])
        lev_i = leverage_table(Vt, max(nc_max, max(c.nc_d for c in configs.values())))
        (p_i, s_i), = frozen_folds(X, Y, Pl, targets, configs, count, B, seed, Vt, lev_i, order_fn,
                                   [i], nc_max, 1)
        preds[i] = p_i[0]
        sels.extend(s_i)
    common = {}
    for t in targets:
        vals = [fold_cfg[(i, t)] for i in range(n)]
        common[t] = max(set(vals), key=lambda c: (vals.count(c), -vals.index(c)))
    warns = [f"fold {i} {t}: {fold_cfg[(i, t)]}" for i in range(n) for t in targets]
    Yf = Y.astype(np.float64)
    res = AbsResult("loocv-autotune-nested", model_names(models, n), list(targets), preds, Yf, common, sels,
                    metrics_table(preds, Yf, targets), sweep=sweep, warnings=warns)
    return res
