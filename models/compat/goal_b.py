"""``compat`` Pace pipeline, Goal B (pairwise): the drivers.

Reproduces the published ``pair --strict-budget --pin-task-a-selection``
pipeline (spec ``pace-method.md`` §6 pairwise pooling, §8, §9.3, §10, §11.2,
§12, §14, §16, §18 items 7/13/14/15/23/24):

* ``loocv_pair_frozen``   — frozen ``TASK_B_CONFIGS_PINNED_A`` (strict, pin-A: both
  halves of Goal A's strict frozen selection are pinned),
* ``loocv_pair_autotune`` — ``--auto-tune`` (§9.3): Goal A's strict auto-tune is
  re-run (``compat.loocv_abs_autotune``); a half is pinned only if Goal A's tuned
  m > 0 (H) / < 1 (D-pt), otherwise Goal B silently uses a fresh top-C for that
  side (§18 item 7, reproduced on purpose); then margins for nc = 1..nc_max are
  cached and the sweep m → nc_h → nc_d (single dummy q) maximises pair accuracy
  (strict ``>``, first wins),
* ``fit_pair`` — ``fit-pair --strict-budget --pin-task-a-selection`` (in-sample,
  all models), with the §14.1 Goal B weights (margin(k vs j) =
  Σ weight_s (X[k, s] − X[j, s])) and a linear proxy per target.

Inputs: X (n × S float64, the §2.4-filtered source matrix), Y (n × T target
means, float32-derived), P (per target an n × N_t float32 per-instance matrix,
list in ``targets`` order or dict), target names.

The pooled fit over B·m(m−1) rows is replaced by the exactly equivalent m(m−1)-row
fit against soft labels (§6 last paragraph; identical objective, hence identical
optimum — checked against the explicit tiled fit in the tests); the per-fold
machinery is ``pair_fold``. Mixing m·margin_H + (1 − m)·margin_D; predicted
winner k iff margin > 0. Pair accuracy (§10): ``metrics.pair_accuracy``; Platt
(§8): ``calibration.platt_fit``, fitted in-sample on the same pairs — output only.
Every driver runs with single-threaded BLAS (``parallel.single_blas``).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

from models.common.autotune import M_GRID, nc_grid, pair_sweep_configs
from models.pair.calibration import platt_fit, platt_prob
from models.compat.goal_a import loocv_abs_autotune
from models.common.configs import AbsConfig, PairConfig, frozen_abs_configs, frozen_pair_configs
from models.common.inputs import compat_inputs
from models.common.metrics import pair_accuracy, pair_accuracy_many
from models.compat.goal_b_fold import PairSide, check_strict, fold_setup, frozen_pair_folds, side_weight
from models.pair.regress import ALPHA, MAXITER
from models.common.parallel import map_jobs, single_blas
from models.common.proxies import PairLinear
from models.common.regress import mix_configs
from models.common.results import FoldSelection, PairResult, SideSelection, model_names
from models.common.selection import OrderFn, compat_order, leverage_table

__all__ = [
    "loocv_pair_frozen",
    "loocv_pair_autotune",
    "fit_pair",
    # re-exported for callers that reach it through ``models.compat.goal_b`` (warehouse.kernels / fit)
    "frozen_pair_configs",
]


def _finish(mode, models, targets, Y, margins, configs, a_configs, sels, pinned, warns, skipped,
            sweep=None):
    """PairResult with accuracy per target (and AVERAGE), in-sample Platt and probabilities."""
    T = len(targets)
    Yf = np.asarray(Y, dtype=np.float64)
    acc, cnt, platt = {}, {}, {}
    prob = np.full_like(margins, np.nan)
    for t_i, t in enumerate(targets):
        a_, c_ = pair_accuracy(margins[:, :, t_i], Yf[:, t_i])
        acc[t], cnt[t] = a_, c_
        a, b = platt_fit(margins[:, :, t_i], Yf[:, t_i])
        platt[t] = (a, b)
        prob[:, :, t_i] = platt_prob(margins[:, :, t_i], a, b)
    acc["AVERAGE"] = float(np.mean([acc[t] for t in targets])) if T else float("nan")
    return PairResult(mode, models, list(targets), margins, prob, Yf, acc, cnt, dict(configs),
                      dict(a_configs), platt, sels, pinned=pinned, sweep=sweep or {},
                      skipped=skipped, warnings=warns)


def _frozen_run(X, Y, P, targets, configs, a_configs, a_q, q, count, B, seed, Vt_full, order_fn,
                folds, alpha, maxiter, n_jobs):
    """Shared by the frozen LOOCV and fit-all: inputs, frozen Goal B configs (pinned-A table) and
    the Goal A configs whose selection is pinned, then the folds (``None`` = every LOOCV fold).
    ``a_q`` goes to Goal A's table only where the published code does (fit-pair; the LOOCV pin-A
    helpers let the table's q win, §18 item 24)."""
    X, Y, Pl, Vt, _ = compat_inputs(X, Y, P, targets, 10, Vt_full)
    warns: List[str] = []
    if configs is None:
        configs, w = frozen_pair_configs(count, targets, pin_a=True)
        if w:
            warns.append(w)
    if a_configs is None:
        a_configs, w = frozen_abs_configs(count, targets, q=a_q)
        if w:
            warns.append(w)
    ncmax = max([10] + [c.nc_d for c in a_configs.values()] + [c.nc_d for c in configs.values()])
    lev = leverage_table(Vt, ncmax)
    folds = list(range(X.shape[0])) if folds is None else folds
    outs = frozen_pair_folds(X, Y, Pl, targets, configs, a_configs, q, count, B, seed, Vt, lev, order_fn,
                             folds, alpha, maxiter, n_jobs)
    return X.shape[0], Y, configs, a_configs, warns, outs


def _nan_diag(margins: np.ndarray) -> None:
    n = margins.shape[0]
    margins[np.arange(n), np.arange(n), :] = np.nan


@single_blas
def loocv_pair_frozen(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
                      models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                      seed: int = 42, pin_a: bool = True, strict: bool = True,
                      configs: Optional[Mapping[str, PairConfig]] = None,
                      a_configs: Optional[Mapping[str, AbsConfig]] = None, q: Optional[float] = None,
                      Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
                      alpha: float = ALPHA, maxiter: int = MAXITER, n_jobs: int = 1) -> PairResult:
    """LOOCV ``pair --strict-budget --pin-task-a-selection`` with frozen configs (§11.2, §12).

    X: (n, S) filtered float64 sources; Y: (n, T) target means; P: per target
    (n, N_t) float32. configs: target → PairConfig (default
    ``TASK_B_CONFIGS_PINNED_A[count]``); a_configs: Goal A configs whose strict
    selection (q, nc_d) is pinned per fold — both halves, regardless of A's m
    (default ``TASK_A_CONFIGS[count]``; the table's q wins over ``q``, §18 item 24).
    Returns ``PairResult`` (mode "loocv"): margins[i, j, t] from fold i.
    """
    check_strict(pin_a, strict)
    n, Y, configs, a_configs, warns, outs = _frozen_run(
        X, Y, P, targets, configs, a_configs, None, q, count, B, seed, Vt_full, order_fn, None, alpha,
        maxiter, n_jobs)
    margins = np.concatenate([o[0] for o in outs], axis=0)
    _nan_diag(margins)
    sels = [s for o in outs for s in o[1]]
    skipped = [s for o in outs for s in o[2]]
    pinned = {t: (True, True) for t in targets}
    return _finish("loocv", model_names(models, n), targets, Y, margins, configs, a_configs, sels, pinned,
                   warns, skipped)


@single_blas
def loocv_pair_autotune(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
                        models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                        seed: int = 42, pin_a: bool = True, strict: bool = True, nc_max: int = 10,
                        m_grid: Sequence[float] = M_GRID, a_q_grid: Optional[Sequence[float]] = None,
                        a_configs: Optional[Mapping[str, AbsConfig]] = None,
                        Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
                        alpha: float = ALPHA, maxiter: int = MAXITER, n_jobs: int = 1) -> PairResult:
    """LOOCV ``pair --strict-budget --pin-task-a-selection --auto-tune`` (§9.3, §12).

    Goal A's strict auto-tune (§9.1) is re-run (``compat.loocv_abs_autotune``,
    q grid ``a_q_grid``) unless ``a_configs`` is given. Per fold and target the
    H half of A's selection is pinned iff A's m > 0 and the D-pt half iff A's
    m < 1; an unpinned side uses a fresh top-C (H: first C of the |ρ| order,
    in rank order; D-pt: first C of the lev_nc·|ρ| order for each nc_d, sorted)
    — §18 item 7. Margins for nc = 1..nc_max are cached; the sweep
    m → nc_h → nc_d (skips: nc_h ≠ 1 when m = 0, nc_d ≠ 1 when m = 1) maximises
    pair accuracy over the LOOCV margins (strict >, first wins; NaN never wins).
    """
    check_strict(pin_a, strict)
    ncs = nc_grid(nc_max)
    m_grid = tuple(float(v) for v in m_grid)
    X, Y, Pl, Vt, lev = compat_inputs(X, Y, P, targets, nc_max, Vt_full)
    n, T = X.shape[0], len(targets)
    warns: List[str] = []
    if a_configs is None:
        a_res = loocv_abs_autotune(X, Y, Pl, targets, count=count, B=B, seed=seed, q_grid=a_q_grid,
                                   nc_max=nc_max, Vt_full=Vt, order_fn=order_fn, n_jobs=n_jobs)
        a_configs = dict(a_res.configs)
    lev = leverage_table(Vt, max(nc_max, max(c.nc_d for c in a_configs.values())))
    pinned = {t: (a_configs[t].m > 0.0, a_configs[t].m < 1.0) for t in targets}
    NH = ND = len(ncs)

    def run_fold(fold):
        tr, per_t = fold_setup(X, Y, Pl, targets, a_configs, None, count, B, seed, Vt, lev, order_fn, fold)
        C = min(int(count), X.shape[1])
        Hm = np.zeros((T, NH, n))
        Dm = np.zeros((T, ND, n))
        cache = []
        for t_i, t in enumerate(targets):
            tt, Yb, sel = per_t[t_i]
            ph, pd = pinned[t]
            if ph:
                H, hrank = sel.H, sel.h_rank
            else:  # fresh top-C in rank order (§18 item 7)
                H, hrank = tt.order_h[:C], np.arange(min(C, tt.order_h.size))
            ps = PairSide(tr, X, Yb, alpha, maxiter)
            for hi, nc in enumerate(ncs):
                Hm[t_i, hi] = ps.margins(ps.h(H, nc))[0]
            Ds = []
            for di, nc in enumerate(ncs):
                if pd:
                    D, drank = sel.D, sel.d_rank
                else:
                    top = tt.order_d(nc)[:C]
                    o = np.argsort(top, kind="stable")
                    D, drank = top[o], o.astype(np.int64)
                Ds.append((D, drank))
                Dm[t_i, di] = ps.margins(ps.d(D, nc))[0]
            cache.append((ps, H, hrank, Ds))
        return Hm, Dm, cache

    outs = map_jobs(run_fold, list(range(n)), n_jobs)
    Hall = np.stack([o[0] for o in outs], axis=2)  # (T, NH, n_fold, n)
    Dall = np.stack([o[1] for o in outs], axis=2)
    cfg_idx = pair_sweep_configs(ncs, m_grid)
    Yf = np.asarray(Y, dtype=np.float64)
    margins = np.zeros((n, n, T))
    configs: Dict[str, PairConfig] = {}
    sweep = {}
    diag = np.eye(n, dtype=bool)
    m_of, h_of, d_of = cfg_idx.T
    for t_i, t in enumerate(targets):
        M = mix_configs(np.asarray(m_grid)[m_of], Hall[t_i][h_of], Dall[t_i][d_of])
        M = np.where(diag[None], np.nan, M)
        acc, _ = pair_accuracy_many(M, Yf[:, t_i])
        s = np.where(np.isnan(acc), -np.inf, acc)
        k = int(np.argmax(s))
        mi, hi, di = cfg_idx[k]
        configs[t] = PairConfig(m=float(m_grid[mi]), nc_h=int(ncs[hi]), nc_d=int(ncs[di]))
        margins[:, :, t_i] = M[k]
        sweep[t] = float(acc[k])
    sels, skipped = [], []
    for fold in range(n):
        for t_i, t in enumerate(targets):
            ps, H, hrank, Ds = outs[fold][2][t_i]
            cfg = configs[t]
            m = cfg.m
            hh = ps.h(H, cfg.nc_h) if H.size else None
            D, drank = Ds[ncs.index(cfg.nc_d)]
            dd = ps.d(D, cfg.nc_d) if D.size else None
            if m > 0 and hh is not None and hh[3]:
                skipped.append((fold, t, "H", cfg.nc_h))
            if m < 1 and dd is not None and dd[3]:
                skipped.append((fold, t, "D", cfg.nc_d))
            oh = np.argsort(H, kind="stable")
            hs = SideSelection(H[oh], np.asarray(hrank)[oh], side_weight(hh, m, H.size)[oh],
                               hh[4] if hh is not None else 0)
            ds = SideSelection(D, drank, side_weight(dd, 1.0 - m, D.size), int(cfg.nc_d))
            sels.append(FoldSelection(fold=fold, target=t, H=hs, D=ds))
    for t in targets:
        if not all(pinned[t]):
            warns.append(f"{t}: Goal A m = {a_configs[t].m} → the "
                         f"{'H' if not pinned[t][0] else 'D-pt'} side is not pinned and uses a fresh "
                         "top-C (published behaviour, spec §18 item 7)")
    return _finish("loocv-autotune", model_names(models, n), targets, Y, margins, configs, a_configs, sels,
                   pinned, warns, skipped, sweep=sweep)


@single_blas
def fit_pair(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
             models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300, seed: int = 42,
             pin_a: bool = True, strict: bool = True,
             configs: Optional[Mapping[str, PairConfig]] = None,
             a_configs: Optional[Mapping[str, AbsConfig]] = None, q: Optional[float] = None,
             Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
             alpha: float = ALPHA, maxiter: int = MAXITER) -> PairResult:
    """In-sample ``fit-pair --strict-budget --pin-task-a-selection`` (§11.3): all n models.

    Selection = Goal A's strict fit-all selection (A configs' q, nc_d); RNG
    seed + 31·t; H training embeddings = U of the SVD of all n rows (§5.4).
    margins[k, j, t] = (E[k] − E[j])·w mixed over sides. ``proxies[target]``
    holds the §14.1 Goal B weights (overlap columns summed) with
    margin(k vs j) = Σ weight_s (X[k, s] − X[j, s]); this equals the margins
    exactly up to the 1e-12 regulariser of the H projection (≈1e-12 relative)
    whenever the H block has full rank ≥ nc_h; when nc_h exceeds the numerical
    rank (§18 item 23) the stored weights carry the blown-up null directions
    and do not reproduce the U-based margins. Platt (a, b) are fitted on the
    in-sample margins (the published LOOCV Platt is in-sample too, §18 item 13).
    """
    check_strict(pin_a, strict)
    n, Y, configs, a_configs, warns, outs = _frozen_run(
        X, Y, P, targets, configs, a_configs, q, q, count, B, seed, Vt_full, order_fn, [-1], alpha,
        maxiter, 1)
    (rows, sels, skipped), = outs
    margins = rows.copy()
    _nan_diag(margins)
    pinned = {t: (True, True) for t in targets}
    res = _finish("fit", model_names(models, n), targets, Y, margins, configs, a_configs, sels, pinned,
                  warns, skipped)
    for fs in sels:
        cols = np.union1d(fs.H.cols, fs.D.cols)
        w = np.zeros(cols.size)
        np.add.at(w, np.searchsorted(cols, fs.H.cols), fs.H.weight)
        np.add.at(w, np.searchsorted(cols, fs.D.cols), fs.D.weight)
        a, b = res.platt[fs.target]
        res.proxies[fs.target] = PairLinear(fs.target, cols, w, a, b, configs[fs.target])
    return res
