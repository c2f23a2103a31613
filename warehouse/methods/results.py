"""What a method returns: result rows (Arrow), never nested values.

``Evaluation`` (``Method.evaluate``): the held-out predictions of a split as long rows, the truths they
are scored against, and the configurations and selections the method used. ``Fit`` (``Method.fit``):
the stored form of the proxies (``StoredProxy`` / ``StoredPairProxy``), which ``pace fit`` writes to
``proxy_fits`` / ``proxy_weights``. Where a method combines its parts with the serving formulas, it
returns a :class:`Query` over its part tables instead of prediction rows; the caller runs it on the
warehouse connection (the formulas are SQL macros, sql/027_leaf_logit.sql and sql/030-033).

The row builders turn the models' result arrays into those rows: predictions keyed by model (and
opponent) and target, selections by column index into ``Matrices.columns`` and fold name ('ALL' for
a fit on every model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa


@dataclass
class Query:
    """SQL over Arrow tables registered under the given names for the query's duration."""

    sql: str
    tables: dict[str, pa.Table]
    params: Mapping[str, Any] | None = None


@dataclass
class Evaluation:
    """A split's held-out predictions.

    predictions: abs rows (model, target, predicted) / pair rows (model, opponent, target, margin, prob,
    neutral), only the cells the method predicted; actual: (n, T) the truths it scores against in the
    matrices' order (None: the target means); configs: (target, fold, m, nc_h, nc_d, q, objective, cal_a,
    cal_b); selections: (fold, target, side, col, rank, weight, nc)."""

    predictions: pa.Table | Query
    actual: np.ndarray | None = None
    configs: pa.Table | None = None
    selections: pa.Table | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class StoredProxy:
    """One target's Goal A proxy in stored form; cols index ``Matrices.columns``."""

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
    in_sample: np.ndarray | None  # (n,) the method's own prediction of each model (None: Fit.in_sample)
    trained_on: list[str] | None = None   # models the fit used for this target (None: all of them)
    link: dict | None = None     # logit-link fits: struct/floor intercepts and slopes, gate, ability range


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


@dataclass
class Fit:
    """A method's fit on every model: the proxies to store, and (when the method combines its parts in
    SQL) the query of its in-sample predictions (model, target, predicted)."""

    proxies: list[StoredProxy] = field(default_factory=list)
    pair_proxies: list[StoredPairProxy] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    in_sample: Query | None = None


# ------------------------------------------------------------------------------------------ rows
def _column(values: np.ndarray, kind: pa.DataType) -> pa.Array:
    """A numpy column as Arrow, NaN -> NULL."""
    values = np.asarray(values)
    return pa.array(values, kind, mask=np.isnan(values)) if kind == pa.float64() else pa.array(values, kind)


def abs_rows(models: Sequence[str], targets: Sequence[str], pred: np.ndarray) -> pa.Table:
    """(n, T) predictions -> rows (model, target, predicted) of the finite cells."""
    pred = np.asarray(pred, dtype=np.float64)
    i, t = np.nonzero(np.isfinite(pred))
    return pa.table({"model": pa.array(np.asarray(models, dtype=object)[i], pa.string()),
                     "target": pa.array(np.asarray(targets, dtype=object)[t], pa.string()),
                     "predicted": _column(pred[i, t], pa.float64())})


def pair_rows(models: Sequence[str], targets: Sequence[str], margins: np.ndarray, prob: np.ndarray,
              neutral: np.ndarray) -> pa.Table:
    """(n, n, T) margins, win probabilities and abstentions of row model k over column model j -> rows
    (model, opponent, target, margin, prob, neutral) of the pairs k != j with a margin or a probability."""
    margins, prob = np.asarray(margins, dtype=np.float64), np.asarray(prob, dtype=np.float64)
    k, j, t = np.nonzero((np.isfinite(margins) | np.isfinite(prob)) & ~np.eye(len(models), dtype=bool)[:, :, None])
    names = np.asarray(models, dtype=object)
    return pa.table({"model": pa.array(names[k], pa.string()), "opponent": pa.array(names[j], pa.string()),
                     "target": pa.array(np.asarray(targets, dtype=object)[t], pa.string()),
                     "margin": _column(margins[k, j, t], pa.float64()), "prob": _column(prob[k, j, t], pa.float64()),
                     "neutral": pa.array(np.asarray(neutral, dtype=bool)[k, j, t], pa.bool_())})


CONFIG_SCHEMA = pa.schema([("target", pa.string()), ("fold", pa.string()), ("m", pa.float64()),
                           ("nc_h", pa.int32()), ("nc_d", pa.int32()), ("q", pa.float64()),
                           ("objective", pa.float64()), ("cal_a", pa.float64()), ("cal_b", pa.float64())])
SELECTION_SCHEMA = pa.schema([("fold", pa.string()), ("target", pa.string()), ("side", pa.string()),
                              ("col", pa.int64()), ("rank", pa.int32()), ("weight", pa.float64()),
                              ("nc", pa.int32())])


def fold_name(models: Sequence[str], fold: int) -> str:
    """A driver's fold index as a fold name: the held-out model, or 'ALL' (-1: a fit on every model)."""
    return "ALL" if fold < 0 else models[fold]


def config_row(target: str, fold: str, cfg: Any, objective: float | None = None,
               platt: tuple[float, float] | None = None) -> dict:
    """One loocv_configs row of a configuration (AbsConfig, PairConfig, or DefaultPairConfig: one rank nc)."""
    q, nc = getattr(cfg, "q", None), getattr(cfg, "nc", None)
    nc_h, nc_d = (nc, nc) if nc is not None else (cfg.nc_h, cfg.nc_d)
    return {"target": target, "fold": fold, "m": float(cfg.m), "nc_h": int(nc_h), "nc_d": int(nc_d),
            "q": None if q is None else float(q), "objective": objective,
            "cal_a": None if platt is None else float(platt[0]), "cal_b": None if platt is None else float(platt[1])}


def config_rows(result: Any, models: Sequence[str]) -> pa.Table:
    """A driver result's configurations: one per (held-out model, target) when tuned inside the folds
    (``fold_configs``), else one per target (fold 'ALL', with the auto-tune objective)."""
    fold_configs = getattr(result, "fold_configs", None) or {}
    fold_platt = getattr(result, "fold_platt", None) or {}
    platt = getattr(result, "platt", None) or {}
    sweep = getattr(result, "sweep", None) or {}
    if fold_configs:
        rows = [config_row(t, fold_name(models, f), c, None, fold_platt.get((f, t), platt.get(t)))
                for (f, t), c in sorted(fold_configs.items(), key=lambda kv: kv[0])]
    else:
        rows = [config_row(t, "ALL", c, sweep.get(t), platt.get(t))
                for t, c in (getattr(result, "configs", None) or {}).items()]
    return config_table(rows)


def config_table(rows: list[dict]) -> pa.Table:
    """``config_row`` dicts as a table."""
    return pa.Table.from_pylist(rows, schema=CONFIG_SCHEMA)


def selection_rows(selections: Sequence[Any], models: Sequence[str], kept: np.ndarray | None = None) -> pa.Table:
    """``FoldSelection`` records -> selection rows; ``kept`` maps the driver's columns to the matrices'
    (compat's zero-variance filter), None when they are the matrices' own."""
    rows = []
    for fs in selections:
        for side_name, side in (("H", fs.H), ("D", fs.D)):
            cols = np.asarray(side.cols, dtype=np.int64)
            cols = cols if kept is None else np.asarray(kept)[cols]
            for c, r, w in zip(cols, np.asarray(side.rank), np.asarray(side.weight, float)):
                rows.append({"fold": fold_name(models, int(fs.fold)), "target": str(fs.target), "side": side_name,
                             "col": int(c), "rank": int(r), "weight": float(w), "nc": int(side.nc)})
    return pa.Table.from_pylist(rows, schema=SELECTION_SCHEMA)
