"""`pace predict`: a model's predicted target scores, from the current fits or a fit restricted to the
source benchmarks it has.

A model that lacks whole source benchmarks of the current fit (GLM-5 has no planbench and no vision
scores) would otherwise be predicted with the training mean in place of every missing score, i.e. the
prediction would ignore what is missing. Instead a proxy is fitted on the benchmarks the model has,
stored as ``proxy_fits`` rows keyed by that set (``restricted_for`` names the model it was made for) and
reused by every later prediction whose model has the same benchmarks; the ``predictions`` view picks,
per model, the fit that covers it best.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from warehouse.fit import FitRequest, fit_and_store

#: a source benchmark counts as present when the model has a usable score for at least this share of
#: the benchmark's instances (the union over models); a few missing rows are imputed, a missing
#: benchmark is not
PRESENT_SHARE = 0.5


@dataclass
class TargetPrediction:
    """One target's predicted score of a model, as the `predictions` view gives it."""
    target: str
    predicted: float
    low: float | None
    high: float | None
    coverage: float
    n_scored: int
    n_instances: int
    method: str
    fit_id: str
    ability: float | None
    ability_distance: float
    out_of_range: bool
    range_side: str | None
    sources: list[str]
    restricted: bool
    loocv_mae: float | None


@dataclass
class PredictionReport:
    model: str
    predictions: list[TargetPrediction]
    missing_sources: list[str] = field(default_factory=list)   # current-fit sources the model lacks
    restricted_fit: str | None = None                          # the restricted fit used (made or reused)
    made_fit: bool = False                                      # True when this call fitted it
    notes: list[str] = field(default_factory=list)


def present_sources(con: duckdb.DuckDBPyConnection, model: str) -> list[str]:
    """The source benchmarks ``model`` has usable scores for (see PRESENT_SHARE)."""
    rows = con.execute("""
        WITH sizes AS (
            SELECT benchmark, count(DISTINCT (subdir, instance_id)) AS n
            FROM scores JOIN benchmarks USING (benchmark) WHERE role = 'source' GROUP BY benchmark
        ),
        mine AS (
            SELECT benchmark, count(DISTINCT (subdir, instance_id)) AS n
            FROM scores WHERE model = ? AND score IS NOT NULL GROUP BY benchmark
        )
        SELECT s.benchmark FROM sizes AS s JOIN mine AS m USING (benchmark)
        WHERE m.n >= ? * s.n ORDER BY s.benchmark""", [model, PRESENT_SHARE]).fetchall()
    return [r[0] for r in rows]


def current_fit_settings(con: duckdb.DuckDBPyConnection) -> dict | None:
    """Method, budget, sources, targets and seeds of the current Goal A fits (None without one)."""
    row = con.execute("""
        SELECT any_value(method), any_value(budget), any_value(sources), list(target ORDER BY target),
               any_value(params), any_value(interval_level)
        FROM current_fits WHERE task = 'abs'""").fetchall()[0]
    if row is None or row[0] is None:
        return None
    params = json.loads(row[4]) if isinstance(row[4], str) else (row[4] or {})
    sources = row[2]
    if sources is None:      # a fit made before sources were recorded: every source benchmark of its time
        sources = [r[0] for r in con.execute(
            "SELECT benchmark FROM benchmarks WHERE role = 'source' ORDER BY benchmark").fetchall()]
    return {"method": row[0], "count": int(row[1]), "sources": sorted(sources), "targets": row[3],
            "B": int(params.get("B", 300)), "seed": int(params.get("seed", 42)), "level": float(row[5] or 0.8)}


def restricted_fit_for(con: duckdb.DuckDBPyConnection, sources: list[str]) -> str | None:
    """The fit_id of a current restricted fit on exactly ``sources`` (any target), if one exists."""
    row = con.execute("""SELECT any_value(fit_id) FROM restricted_fits
                         WHERE task = 'abs' AND list_sort(sources) = ?""", [sorted(sources)]).fetchall()[0]
    return row[0] if row else None


def fit_restricted(con: duckdb.DuckDBPyConnection, model: str, sources: list[str], settings: dict, reopen=None):
    """Fit the current method on ``sources`` only, for ``model``; returns the FitReport."""
    req = FitRequest(method=settings["method"], count=settings["count"], B=settings["B"], seed=settings["seed"],
                     sources=sources, targets=settings["targets"], level=settings["level"], tasks=("abs",),
                     restricted_for=model)
    return fit_and_store(con, req, reopen=reopen)


def read_predictions(con: duckdb.DuckDBPyConnection, model: str) -> list[TargetPrediction]:
    rows = con.execute("""
        SELECT p.target, p.predicted, p.low, p.high, p.coverage, p.n_scored, p.n_instances, p.method, p.fit_id,
               p.ability, p.ability_distance, p.out_of_range, p.range_side, p.sources, p.restricted, f.loocv_mae
        FROM predictions AS p JOIN proxy_fits AS f ON f.fit_id = p.fit_id AND f.task = 'abs' AND f.target = p.target
        WHERE p.model = ? ORDER BY p.target""", [model]).fetchall()
    return [TargetPrediction(*r[:13], list(r[13] or []), bool(r[14]), r[15]) for r in rows]


def out_of_range_note(model: str, predictions: list[TargetPrediction]) -> str | None:
    """One sentence when the model's source ability lies outside the training models' range."""
    far = [p for p in predictions if p.out_of_range]
    if not far:
        return None
    d = max(p.ability_distance for p in far)
    side = {"below": "below", "above": "above"}.get(far[0].range_side, "outside")
    return (f"out of range: {model}'s source ability lies {side} that of every model the fit was trained on "
            f"({d:.2f} training standard deviations beyond the {'weakest' if side == 'below' else 'strongest'}); "
            "the prediction extrapolates, leaning on the source-ability link more than inside the range, and "
            "its interval comes from the extrapolation splits' residuals"
            + (" and reaches down to the floor reading (a model at chance on every source scores ~1%)."
               if side == "below" else "."))
