"""`pace fit`: fit each target's proxy on every model with target scores and store it as rows.

The stored rows are the predictor: ``predictions`` (sql/054) recomputes a model's prediction from
its score rows and ``proxy_weights`` with plain SQL. For ``default`` the rows reproduce the fitted
model's own in-sample predictions exactly; for ``compat`` (zeros for missing data, a fallback to the
mean instead of a clamp, spec §14.1) the gap is measured and reported.

Intervals: the same method is evaluated leave-one-model-out on the training models; the
``(1 -+ level) / 2`` quantiles of the held-out residuals (actual - predicted) become the interval
offsets. Their calibration is checked by leaving each residual out of its own interval.
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import numpy as np

from warehouse.matrices import Matrices, build_matrices, published_arrays


@dataclass
class FitRequest:
    method: str = "default"
    count: int = 100
    B: int = 300
    seed: int = 42
    sources: list[str] | None = None
    targets: list[str] | None = None
    exclude: list[str] = field(default_factory=list)   # models left out of the fit (e.g. to predict them)
    level: float = 0.8
    intervals: bool = True
    tasks: tuple[str, ...] = ("abs", "pair")            # Goal A, Goal B


@dataclass
class StoredProxy:
    """One target's proxy in stored form; cols index ``Matrices.columns``."""
    target: str
    cols: np.ndarray
    side: list[str]
    weight: np.ndarray
    center: np.ndarray
    intercept: float
    lo: float
    hi: float
    mix: float | None
    config: dict
    in_sample: np.ndarray        # (n_train,) the kernel's own prediction for each training model
    trained_on: list[str] | None = None   # models the fit used for this target (None: all of them)


@dataclass
class FitReport:
    fit_id: str
    method: str
    models: list[str]
    targets: list[str]
    n_instances: dict[str, int]
    view_gap: dict[str, float]               # max |predictions view - kernel in-sample| per target
    formula_gap: dict[str, float]            # the same with missing scores as the method sees them
                                             # (compat: 0) instead of the view's training-mean imputation
    resid_lo: dict[str, float]
    resid_hi: dict[str, float]
    interval_loo_coverage: dict[str, float]  # share of held-out truths inside a leave-one-out interval
    seconds: float
    warnings: list[str]
    pair_view_gap: dict[str, float] = field(default_factory=dict)   # max |pair_predictions margin - kernel|
    pair_calibration: dict[str, tuple[float, float]] = field(default_factory=dict)


def data_hash(models: list[str], columns: list, X: np.ndarray, P: list[np.ndarray]) -> str:
    h = hashlib.sha256(json.dumps([models, [list(c) for c in columns]]).encode())
    for arr in [X, *P]:
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------------ the methods
def _fit_default(X, P, targets, models, req: FitRequest) -> tuple[list[StoredProxy], list[str]]:
    from models.default import fit_abs_default

    res = fit_abs_default(X, P, targets, models=models, count=req.count, B=req.B, seed=req.seed, n_jobs=2)
    out = []
    for t, target in enumerate(targets):
        p = res.proxies[target]
        cfg = p.config
        out.append(StoredProxy(target, np.asarray(p.cols), [str(s) for s in p.side], np.asarray(p.weight, float),
                               np.asarray(p.centre, float), float(p.intercept), float(p.lo), float(p.hi),
                               float(cfg.m), {"m": cfg.m, "nc_h": cfg.nc_h, "nc_d": cfg.nc_d, "q": cfg.q},
                               np.asarray(res.pred[:, t], float), list(p.trained_on)))
    return out, list(res.warnings)


def _fit_compat(X, P, targets, models, req: FitRequest) -> tuple[list[StoredProxy], list[str]]:
    """The published fit-abs (strict, frozen configs); weights in their exact linear form."""
    from models import compat

    Xv, kept, P32, Y = published_arrays(X, P)
    configs, warn = compat.frozen_abs_configs(req.count, targets)
    res = compat.fit_abs(Xv, Y, P32, targets, models=models, count=req.count, B=req.B, seed=req.seed,
                         configs=configs, weight_mode="predictor")
    table = res.selection_table()
    out = []
    for t, target in enumerate(targets):
        mask = np.asarray(table["target"]) == target
        cols_v = np.asarray(table["col_idx"], int)[mask]
        weight = np.asarray(table["weight"], float)[mask]
        center = Xv[:, cols_v].mean(axis=0)
        signal = (Xv[:, cols_v] - center) @ weight
        pred = np.asarray(res.pred[:, t], float)
        intercept = float(np.median(pred - signal))      # the pooled label mean; exact unless a side fell back
        y = Y[:, t].astype(float)
        spread = max(float(y.max() - y.min()), 1e-6)
        cfg = res.configs[target]
        # The published envelope falls back to the mean outside [min - 2R, max + 2R]; a clamp is the
        # closest linear-plus-clip form, and scores live in [0, 1] anyway (spec §20 item 12).
        lo, hi = max(float(y.min() - 2 * spread), 0.0), min(float(y.max() + 2 * spread), 1.0)
        out.append(StoredProxy(target, kept[cols_v], [str(s) for s in np.asarray(table["side"])[mask]], weight,
                               center, intercept, lo, hi,
                               float(cfg.m), {"m": cfg.m, "nc_h": cfg.nc_h, "nc_d": cfg.nc_d, "q": cfg.q}, pred))
    return out, [warn] if warn else []


FITTERS = {"default": _fit_default, "compat": _fit_compat}


@dataclass
class StoredPairProxy:
    """One target's pair proxy: margin(a, b) = sum weight * (x_a - x_b), x missing -> center."""
    target: str
    cols: np.ndarray
    weight: np.ndarray
    center: np.ndarray
    cal_a: float
    cal_b: float
    config: dict
    trained_on: list[str] | None = None   # models the fit used for this target (None: all of them)


def _fit_pair_default(X, P, targets, models, req: FitRequest) -> tuple[list[StoredPairProxy], list[str]]:
    from models.pair_default import fit_pair_default

    res = fit_pair_default(X, P, targets, models=models, count=req.count, B=req.B, seed=req.seed, n_jobs=2)
    out = []
    for target in targets:
        p = res.proxies[target]
        out.append(StoredPairProxy(target, np.asarray(p.cols), np.asarray(p.weight, float),
                                   np.asarray(p.centre, float), float(p.a), float(p.b), _config_dict(p.config),
                                   list(p.trained_on)))
    return out, list(res.warnings)


def _fit_pair_compat(X, P, targets, models, req: FitRequest) -> tuple[list[StoredPairProxy], list[str]]:
    """The published fit-pair (strict, pinned to Goal A's selection, frozen pinned-A configs)."""
    from models import pair

    Xv, kept, P32, Y = published_arrays(X, P)
    configs, _ = pair.frozen_pair_configs(req.count, targets, pin_a=True)
    res = pair.fit_pair(Xv, Y, P32, targets, models=models, count=req.count, B=req.B, seed=req.seed,
                        pin_a=True, strict=True, configs=configs)
    out = []
    for target in targets:
        p = res.proxies[target]
        cols_v = np.asarray(p.cols, int)
        out.append(StoredPairProxy(target, kept[cols_v], np.asarray(p.weight, float), Xv[:, cols_v].mean(axis=0),
                                   float(p.a), float(p.b), _config_dict(p.config)))
    return out, list(res.warnings)


def _config_dict(cfg) -> dict:
    return {k: getattr(cfg, k) for k in ("m", "nc_h", "nc_d", "q", "nc", "reg") if hasattr(cfg, k)}


PAIR_FITTERS = {"default": _fit_pair_default, "compat": _fit_pair_compat}


def _loocv_residuals(X, P, targets, models, req: FitRequest) -> np.ndarray:
    """(n, T) held-out residuals actual - predicted of the same method (NaN where no truth)."""
    from warehouse.kernels import METHODS

    params = {"method": req.method, "mode": "loocv", "count": req.count, "B": req.B, "seed": req.seed}
    result, _ = METHODS[req.method](X, P, targets, models, params)
    return np.asarray(result.actual, float) - np.asarray(result.pred, float)


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


def loo_interval_coverage(residuals: np.ndarray, level: float) -> float:
    """Share of residuals inside the interval built from all the *other* residuals."""
    r = residuals[np.isfinite(residuals)]
    if r.size < 3:
        return float("nan")
    inside = []
    for i in range(r.size):
        lo, hi = interval_offsets(np.delete(r, i), level)
        inside.append(lo <= r[i] <= hi)
    return float(np.mean(inside))


# ------------------------------------------------------------------------------------------ store
def fit_and_store(con: duckdb.DuckDBPyConnection, req: FitRequest, reopen=None) -> FitReport:
    """Fit and store. ``reopen(con) -> con``, when given, is called between the computation and the
    writes: the CLI computes on a read-only connection (other readers keep working) and writes on
    a read-write one it opens only then."""
    if req.method not in FITTERS:
        raise ValueError(f"unknown method {req.method!r}; available: {', '.join(sorted(FITTERS))}")
    started = time.perf_counter()
    m: Matrices = build_matrices(con, sources=req.sources, targets=req.targets)
    unknown = sorted(set(req.exclude) - set(m.models))
    if unknown:
        raise ValueError(f"--exclude names models the warehouse does not know: {', '.join(unknown)}")
    rows = [i for i, name in enumerate(m.models) if name not in set(req.exclude)]
    models = [m.models[i] for i in rows]
    X, P = m.X[rows], [p[rows] for p in m.P]
    proxies, warnings = FITTERS[req.method](X, P, m.targets, models, req) if "abs" in req.tasks else ([], [])
    pair_proxies, pair_warnings = (PAIR_FITTERS[req.method](X, P, m.targets, models, req)
                                   if "pair" in req.tasks else ([], []))
    warnings += pair_warnings
    residuals = (_loocv_residuals(X, P, m.targets, models, req) if req.intervals and proxies
                 else np.full((len(models), len(m.targets)), np.nan))
    fit_id = f"fit-{req.method}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    digest = data_hash(models, m.columns, X, P)
    report = FitReport(fit_id, req.method, models, m.targets, {}, {}, {}, {}, {}, {}, 0.0, warnings)

    weight_rows = []
    fit_rows = []
    for t, proxy in enumerate(proxies):
        lo_r, hi_r = interval_offsets(residuals[:, t], req.level)
        report.resid_lo[proxy.target], report.resid_hi[proxy.target] = lo_r, hi_r
        report.interval_loo_coverage[proxy.target] = loo_interval_coverage(residuals[:, t], req.level)
        report.n_instances[proxy.target] = len({int(c) for c in proxy.cols})
        params = dict(proxy.config, B=req.B, seed=req.seed, sources=req.sources,
                      interval_loo_coverage=report.interval_loo_coverage[proxy.target])
        fit_rows.append((fit_id, "abs", req.method, proxy.target, req.count, json.dumps(params), proxy.intercept,
                         proxy.lo, proxy.hi, proxy.mix, None, None, _none(lo_r), _none(hi_r), req.level,
                         proxy.trained_on or models, digest))
        for c, side, w, ctr in zip(proxy.cols, proxy.side, proxy.weight, proxy.center):
            b, s, i = m.columns[int(c)]
            weight_rows.append((fit_id, "abs", proxy.target, b, s, i, side, float(w), float(ctr)))

    for proxy in pair_proxies:
        report.pair_calibration[proxy.target] = (proxy.cal_a, proxy.cal_b)
        params = dict(proxy.config, B=req.B, seed=req.seed, sources=req.sources)
        fit_rows.append((fit_id, "pair", req.method, proxy.target, req.count, json.dumps(params), None, None, None,
                         params.get("m"), proxy.cal_a, proxy.cal_b, None, None, None,
                         proxy.trained_on or models, digest))
        for c, w, ctr in zip(proxy.cols, proxy.weight, proxy.center):
            b, s_, i = m.columns[int(c)]
            weight_rows.append((fit_id, "pair", proxy.target, b, s_, i, "pair", float(w), float(ctr)))

    if reopen is not None:
        con = reopen(con)
    con.execute("BEGIN TRANSACTION")
    try:
        con.executemany("INSERT INTO proxy_fits VALUES (?, ?, ?, ?, ?, ?::JSON, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "current_localtimestamp())", fit_rows)
        con.executemany("INSERT INTO proxy_weights VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", weight_rows)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    # The stored rows must be the predictor: compare the view with the kernel on the training models.
    view = {(mo, t): v for mo, t, v in con.execute(
        "SELECT model, target, predicted FROM predictions WHERE fit_id = ?", [fit_id]).fetchall()}
    for proxy in proxies:
        gaps = [abs(view[(mo, proxy.target)] - float(np.clip(k, proxy.lo, proxy.hi)))
                for mo, k in zip(models, proxy.in_sample) if np.isfinite(k)]
        report.view_gap[proxy.target] = max(gaps) if gaps else float("nan")
        # compat's own semantics: a missing score is a 0, not the training mean
        x = np.nan_to_num(X[:, proxy.cols], nan=0.0) if req.method == "compat" else \
            np.where(np.isnan(X[:, proxy.cols]), proxy.center, X[:, proxy.cols])
        formula = np.clip(proxy.intercept + (x - proxy.center) @ proxy.weight, proxy.lo, proxy.hi)
        kernel = np.clip(proxy.in_sample, proxy.lo, proxy.hi)
        finite = np.isfinite(kernel)
        report.formula_gap[proxy.target] = float(np.abs(formula - kernel)[finite].max()) if finite.any() else float("nan")
    for proxy in pair_proxies:
        x = np.where(np.isnan(X[:, proxy.cols]), proxy.center, X[:, proxy.cols])
        s_kernel = x @ proxy.weight
        view = {(a, b): v for a, b, v in con.execute(
            "SELECT model, opponent, margin FROM pair_predictions WHERE fit_id = ? AND target = ?",
            [fit_id, proxy.target]).fetchall()}
        gaps = [abs(view[(a, b)] - (s_kernel[i] - s_kernel[j]))
                for i, a in enumerate(models) for j, b in enumerate(models) if i != j and (a, b) in view]
        report.pair_view_gap[proxy.target] = max(gaps) if gaps else float("nan")
    report.seconds = time.perf_counter() - started
    return report


def _none(v: float) -> float | None:
    return None if not np.isfinite(v) else v
