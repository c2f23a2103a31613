"""Agentic anchors in the warehouse: each target's item model as rows, and the next anchors to buy.

``fit_anchors`` fits the estimator of :mod:`models.anchors.target` for every target with enough models
(every model with rows on the target that is not held out of fits or excluded) and returns its rows;
``store_anchor_fit`` writes them (tables ``anchor_fits``, ``anchor_items``, ``anchor_grid``,
``anchor_curve``, ``anchor_priors``, ``anchor_factors``). The estimate itself is SQL (view
``anchor_estimates``: a posterior over the stored grid, see ``sql/``), and ``predictions`` serves it for a
model the item models were not trained on. ``plan_anchors`` reads the same rows back to choose, per
target, the anchors that most narrow a model's interval (``pace plan MODEL --anchors K``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from statistics import NormalDist

import duckdb
import numpy as np
import pyarrow as pa

from models.anchors.features import FEATURES, metadata_features
from models.anchors.grid import Grid
from models.anchors.items import ItemParams
from models.anchors.target import (DOF, KS, Prior, TargetModel, anchors_to_reach, expected_widths, fit_target,
                                   metadata_prior, pool_factors)
from models.anchors.target import plan as plan_target
from warehouse.settings import jobs
from warehouse.storing import fill_fit_constants, insert_arrow

MIN_MODELS = 3                  # a target with fewer training models gets no item model
#: every described model's metadata features' inputs: an index's (OpenHands agent), with a release date set by
#: `pace metadata set` winning over the index's (as in the view model_release), so a model described by such a
#: date only has a prior too
METADATA = """
    WITH indexed AS (
        SELECT model, any_value(release_date) AS release_date, any_value(output_price) AS output_price,
               any_value(openness) AS openness, any_value(active_parameter_count_b) AS active_parameter_count_b,
               any_value(parameter_count_b) AS parameter_count_b
        FROM model_metadata WHERE agent = 'openhands' GROUP BY model
    ),
    user_dates AS (
        SELECT model, release_date FROM model_metadata_set WHERE release_date IS NOT NULL
    )
    SELECT coalesce(i.model, u.model) AS model, coalesce(u.release_date, i.release_date) AS release_date,
           i.output_price, i.openness, i.active_parameter_count_b, i.parameter_count_b
    FROM indexed AS i FULL OUTER JOIN user_dates AS u ON u.model = i.model"""


@dataclass
class AnchorFit:
    """What ``fit_anchors`` made: per target its model, trained-on models and item keys; priors from metadata
    of every described model; the targets left without an item model and why."""
    fit_id: str
    level: float
    targets: dict[str, TargetModel] = field(default_factory=dict)
    items: dict[str, list[tuple[str, str]]] = field(default_factory=dict)      # target -> (subdir, instance_id)
    priors: list[tuple[str, str, Prior]] = field(default_factory=list)          # (target, model, prior)
    skipped: dict[str, str] = field(default_factory=dict)


#: every target row the item models learn from (``$1``: the targets, NULL: every target benchmark), of the
#: models not held out of fits (a second spelling awaiting `pace alias`) and not in ``$2`` (e.g. the models
#: of an evaluation fold): models without source rows (an OpenHands Index import) included
TARGET_ROWS = """
    SELECT s.benchmark AS target, s.model, s.subdir, s.instance_id, s.score
    FROM scores AS s
    JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'target'
    WHERE s.score IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM model_holds AS h WHERE h.model = s.model)   -- view models' held, unread
      AND ($1::VARCHAR[] IS NULL OR list_contains($1::VARCHAR[], s.benchmark))
      AND NOT list_contains($2::VARCHAR[], s.model)
    ORDER BY s.benchmark, s.model, s.subdir, s.instance_id"""


def item_matrix(rows) -> tuple[list[str], list[tuple[str, str]], np.ndarray]:
    """(models (m,) sorted, item keys (n,) (subdir, instance_id) sorted, y (m, n) 0/1 with NaN where a model
    has no result) of one target's rows ``(model, subdir, instance_id, score)``."""
    rows = list(rows)
    models = sorted({r[0] for r in rows})
    keys = sorted({(r[1], r[2]) for r in rows})
    col = {k: j for j, k in enumerate(keys)}
    row = {m: i for i, m in enumerate(models)}
    y = np.full((len(models), len(keys)), np.nan)
    for model, subdir, instance_id, score in rows:
        y[row[model], col[(subdir, instance_id)]] = score
    return models, keys, y


def target_matrix(con: duckdb.DuckDBPyConnection, target: str, exclude: list[str]
                  ) -> tuple[list[str], list[tuple[str, str]], np.ndarray]:
    """``item_matrix`` of one target's ``TARGET_ROWS`` (models in ``exclude`` left out), the rows numbered
    by DuckDB and read as Arrow: 7 M rows at 1,000 models took ~16 s as Python tuples."""
    cells = con.sql(f"""
        WITH target_rows AS ({TARGET_ROWS})
        SELECT dense_rank() OVER (ORDER BY model) - 1 AS i,
               dense_rank() OVER (ORDER BY subdir, instance_id) - 1 AS j, model, subdir, instance_id, score
        FROM target_rows""", params=[[target], list(exclude)]).to_arrow_table()
    i, j = cells["i"].to_numpy(), cells["j"].to_numpy()
    first_i = np.unique(i, return_index=True)[1]
    first_j = np.unique(j, return_index=True)[1]
    models = cells["model"].take(first_i).to_pylist()
    keys = list(zip(cells["subdir"].take(first_j).to_pylist(), cells["instance_id"].take(first_j).to_pylist()))
    y = np.full((len(models), len(keys)), np.nan)
    y[i, j] = cells["score"].to_numpy(zero_copy_only=False)
    return models, keys, y


def features_by_model(rows) -> dict[str, np.ndarray]:
    """model -> its metadata features, from ``METADATA``'s rows (dicts)."""
    return {row["model"]: metadata_features(row) for row in rows}


def feature_matrix(features: dict[str, np.ndarray], models: list[str]) -> np.ndarray:
    """(m, f) the features of ``models`` (all NaN for a model without metadata)."""
    width = len(next(iter(features.values()))) if features else len(FEATURES)
    return np.stack([features.get(m, np.full(width, np.nan)) for m in models]).reshape(len(models), width)


def _features(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    return features_by_model(con.sql(METADATA).to_arrow_table().to_pylist())


@dataclass
class AnchorInputs:
    """What ``fit_anchors`` reads: per target (in order) its models, item keys and results y (m, n); every
    described model's metadata features."""
    targets: list[tuple[str, list[str], list[tuple[str, str]], np.ndarray]]
    features: dict[str, np.ndarray]


def read_anchor_inputs(con: duckdb.DuckDBPyConnection, targets: list[str] | None = None,
                       exclude: list[str] | None = None) -> AnchorInputs:
    """The rows ``fit_anchors`` learns from (``targets``: default every target benchmark), without the models
    in ``exclude`` and held models."""
    exclude = list(exclude or [])
    if targets is None:
        targets = [t for (t,) in con.execute("SELECT benchmark FROM benchmarks WHERE role = 'target' "
                                             "ORDER BY benchmark").fetchall()]
    return AnchorInputs([(target, *target_matrix(con, target, exclude)) for target in targets], _features(con))


def fit_anchor_inputs(inputs: AnchorInputs, fit_id: str = "", *, level: float = 0.8, inner_folds: int = 5,
                      progress=None) -> AnchorFit:
    """``fit_anchors`` on rows already read: no I/O, so it may run beside other work (`pace fit` runs it on a
    thread beside the proxy fit)."""
    features = inputs.features
    out = AnchorFit(fit_id, level)
    for target, models, keys, y in inputs.targets:
        if len(models) < MIN_MODELS:
            out.skipped[target] = f"{len(models)} model(s) with rows (at least {MIN_MODELS} needed)"
            continue
        x = feature_matrix(features, models)
        if progress is not None:
            progress(f"anchors: item model of {target} ({len(models)} models x {len(keys)} instances)")
        fitted = fit_target(y, models, x, level=level, inner_folds=inner_folds, n_jobs=jobs())
        out.targets[target], out.items[target] = fitted, keys
        for model, feats in sorted(features.items()):
            prior = metadata_prior(fitted.features, fitted.abilities, feats)
            if prior is not None:
                out.priors.append((target, model, prior))
    pool_factors(list(out.targets.values()))
    return out


def fit_anchors(con: duckdb.DuckDBPyConnection, fit_id: str = "", *, targets: list[str] | None = None,
                exclude: list[str] | None = None, level: float = 0.8, inner_folds: int = 5,
                progress=None) -> AnchorFit:
    """Fit every target's anchors estimator (``targets``: default every target benchmark) on the models
    with rows there, leaving out ``exclude`` (e.g. models to predict as if new) and held models. Reads only
    (a read-only connection will do); ``fit_id``, the proxy fit the item models belong to, may be set on the
    result before :func:`store_anchor_fit`."""
    return fit_anchor_inputs(read_anchor_inputs(con, targets, exclude), fit_id, level=level,
                             inner_folds=inner_folds, progress=progress)


def _finite(value: float) -> float | None:
    """A stored factor or bound: None (NULL) for inf (a factor not learnt, an unbounded range)."""
    return float(value) if np.isfinite(value) else None


def store_anchor_fit(con: duckdb.DuckDBPyConnection, fit: AnchorFit) -> None:
    """Write ``fit``'s rows (one transaction is the caller's)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for target, tm in fit.targets.items():
        keys = fit.items[target]
        con.execute("INSERT INTO anchor_fits (fit_id, target, n_models, n_items, level, z_level, dof, trained_on, "
                    "created_at, range_lo, range_hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [fit.fit_id, target, len(tm.models), tm.n_items, fit.level,
                     NormalDist().inv_cdf((1 + fit.level) / 2), DOF, tm.models, now,
                     _finite(tm.range_lo), _finite(tm.range_hi)])
        p = tm.params.prob(tm.grid)                                           # (P, n)
        tables = {
            "anchor_items": {"fit_id": fit.fit_id, "target": target, "subdir": [k[0] for k in keys],
                             "instance_id": [k[1] for k in keys], "a": tm.params.a, "b": tm.params.b},
            "anchor_grid": {"fit_id": fit.fit_id, "target": target, "point": np.arange(tm.grid.size),
                            "theta": tm.grid.theta, "slip": tm.grid.slip,
                            "slip_weight": tm.slip_weights[tm.grid.level],
                            "expected_total": p.sum(1), "noise_total": (p * (1 - p)).sum(1)},
            "anchor_curve": {"fit_id": fit.fit_id, "target": target, "theta": tm.curve_theta,
                             "full_mean": tm.curve},
            "anchor_factors": {"fit_id": fit.fit_id, "target": target, "k": list(tm.factors),
                               "factor": [_finite(v) for v in tm.factors.values()],
                               "factor_outside": [_finite(tm.factors_outside.get(k, v))
                                                  for k, v in tm.factors.items()]},
        }
        for name, columns in tables.items():
            n = max(len(v) for v in columns.values() if not isinstance(v, str))
            arrow = pa.table({k: [v] * n if isinstance(v, str) else v for k, v in columns.items()})
            insert_arrow(con, name, arrow, by_name=True)
    if fit.priors:
        con.executemany("INSERT INTO anchor_priors VALUES (?, ?, ?, ?, ?, ?)",
                        [[fit.fit_id, t, m, p.mean, p.sd, p.kind] for t, m, p in fit.priors])
    fill_fit_constants(con)


# ------------------------------------------------------------------------------------------------ plan
@dataclass
class AnchorPlanRow:
    """One anchor to run: the target instance and what it is expected to cost (USD; None: unknown)."""
    target: str
    subdir: str
    instance_id: str
    rank: int
    expected_cost: float | None


@dataclass
class TargetAnchors:
    """Per target: the model's current estimate (shares), its anchors so far, the prior used, and the plan;
    ``width_now`` the width of the interval ``predictions`` serves now (the sources' or the anchors'),
    ``widths`` the width expected after the first k planned anchors (k = 0, 1, ...: ``expected_widths``),
    ``needed`` with a target width the anchors that reach it (0: reached now; None: not with the instances
    left), ``available`` the target's instances the model has not run."""
    target: str
    predicted: float | None
    low: float | None
    high: float | None
    anchors: int
    prior: str
    rows: list[AnchorPlanRow]
    width_now: float | None = None
    widths: list[float] = field(default_factory=list)
    needed: int | None = None
    available: int = 0

    @property
    def cost(self) -> float:
        return float(sum(r.expected_cost or 0.0 for r in self.rows))

    @property
    def expected_width(self) -> float | None:
        """The width expected once the listed anchors are run (about: the path of the planned order)."""
        if not self.widths:
            return None
        return self.widths[min(len(self.rows), len(self.widths) - 1)] if self.rows else self.width_now


def stored_target(con: duckdb.DuckDBPyConnection, fit_id: str, target: str):
    """The stored TargetModel of one target, with its item keys (read back from the rows)."""
    items = con.execute("SELECT subdir, instance_id, a, b FROM anchor_items WHERE fit_id = ? AND target = ? "
                        "ORDER BY subdir, instance_id", [fit_id, target]).fetchall()
    grid = con.execute("SELECT theta, slip, slip_weight FROM anchor_grid WHERE fit_id = ? AND target = ? "
                       "ORDER BY point", [fit_id, target]).fetchall()
    level = con.execute("SELECT level FROM anchor_fits WHERE fit_id = ? AND target = ?", [fit_id, target]).fetchone()[0]
    theta = np.array([g[0] for g in grid])
    slip = np.array([g[1] for g in grid])
    levels, index = np.unique(slip, return_inverse=True)
    weights = np.zeros(levels.size)
    weights[index] = [g[2] for g in grid]
    params = ItemParams(np.array([r[2] for r in items]), np.array([r[3] for r in items]))
    model = TargetModel(params, Grid(theta, slip, levels, index), weights, [], np.zeros(0), np.zeros((0, 4)),
                        np.zeros(0), np.zeros(0), level)
    return model, [(r[0], r[1]) for r in items]


def set_stored_factors(con: duckdb.DuckDBPyConnection, model: TargetModel, fit_id: str, target: str) -> None:
    """Give ``model`` the stored widening factors and training range of one target (NULL: inf / unbounded;
    a fit stored before the out-of-range factors has factor_outside NULL: its one factor applies)."""
    rows = con.execute("SELECT k, factor, coalesce(factor_outside, factor) FROM anchor_factors "
                       "WHERE fit_id = ? AND target = ?", [fit_id, target]).fetchall()
    lo, hi = con.execute("SELECT range_lo, range_hi FROM anchor_fits WHERE fit_id = ? AND target = ?",
                         [fit_id, target]).fetchone()
    inf = float("inf")
    model.factors = {k: (f if f is not None else inf) for k, f, _ in rows}
    model.factors_outside = {k: (f if f is not None else inf) for k, _, f in rows} if lo is not None else {}
    model.range_lo, model.range_hi = (lo, hi) if lo is not None else (-inf, inf)


def plan_anchors(con: duckdb.DuckDBPyConnection, model: str, count: int,
                 target_width: float | None = None) -> list[TargetAnchors]:
    """Per target of the current anchor fits, the ``count`` instances ``model`` should run next (adaptive:
    given the anchors it already has), with their expected costs (``anchor_costs``) and the interval width
    expected after them. ``target_width`` (shares): list per target only as many as bring its interval to
    at most that (none when the interval served now already is; ``needed`` says how many would, which may
    exceed ``count``, or None when every instance left would not)."""
    out = []
    state = con.execute("""
        SELECT e.target, e.fit_id, e.predicted, e.low, e.high, e.anchors, e.prior_kind, e.prior_mean, e.prior_sd,
               p.high - p.low
        FROM anchor_estimates AS e LEFT JOIN predictions AS p ON p.model = e.model AND p.target = e.target
        WHERE e.model = ? ORDER BY e.target""", [model]).fetchall()
    for target, fit_id, predicted, low, high, anchors, kind, mean, sd, served in state:
        tm, keys = stored_target(con, fit_id, target)
        set_stored_factors(con, tm, fit_id, target)
        results = dict(((s, i), y) for s, i, y in con.execute(
            "SELECT subdir, instance_id, score FROM scores WHERE model = ? AND benchmark = ? AND score IS NOT NULL",
            [model, target]).fetchall())
        y = np.array([results.get(k, np.nan) for k in keys], dtype=np.float64)
        observed = np.isfinite(y)
        available = int((~observed).sum())
        prior = Prior(mean, sd, kind)
        # with a target width the whole order is planned: how many reach it may exceed count
        depth = available if target_width is not None else count
        chosen = plan_target(tm, prior, y, observed, depth) if depth > 0 else np.zeros(0, int)
        width_now = float(served if served is not None else high - low)
        widths = expected_widths(tm, prior, y, observed, chosen, float(high - low), predicted)
        needed = None
        if target_width is not None:
            needed = anchors_to_reach(widths, width_now, target_width)
            chosen = chosen[:min(count, available if needed is None else needed)]
        costs = dict(((s, i), c) for s, i, c in con.execute(
            "SELECT subdir, instance_id, expected_cost FROM anchor_costs WHERE model = ? AND benchmark = ?",
            [model, target]).fetchall())
        rows = [AnchorPlanRow(target, keys[j][0], keys[j][1], rank + 1, costs.get(keys[j]))
                for rank, j in enumerate(chosen)]
        out.append(TargetAnchors(target, predicted, low, high, int(anchors), kind, rows, width_now,
                                 [float(w) for w in widths], needed, available))
    return out


__all__ = ["KS", "METADATA", "MIN_MODELS", "TARGET_ROWS", "AnchorFit", "AnchorInputs", "AnchorPlanRow", "TargetAnchors",
           "fit_anchor_inputs", "fit_anchors", "plan_anchors", "read_anchor_inputs", "target_matrix",
           "feature_matrix", "features_by_model", "item_matrix", "set_stored_factors", "store_anchor_fit",
           "stored_target"]
