"""`pace predict`: a model's predicted target scores, from the current fits or a fit restricted to the
source benchmarks it has.

A model's prediction comes from the current fit or from the restricted fit made for exactly the source
benchmarks it has (the rule is in the ``fit_predictions`` / ``predictions`` views), so predicting one
model never changes another's answer. A model that lacks whole source benchmarks of the current fit
(GLM-5 has no planbench and no vision scores) would otherwise be predicted with the training mean in
place of every missing score, i.e. the prediction would ignore what is missing. Instead a proxy is
fitted on the benchmarks the model has, stored as ``proxy_fits`` rows keyed by that set
(``restricted_for`` names the model it was made for, ``restricted_from`` the current fit it stands in
for) and reused by every later prediction whose model has the same benchmarks; the ``predictions``
view picks, per model, whichever of the two it covers better.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from warehouse.fit import FitRequest, fit_and_store
from warehouse.pace_bench import METHOD as IMPORTED_METHOD


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
    anchors: int = 0               # agentic anchors the estimate used (method 'anchors'; 0: the sources' answer)
    prior: str | None = None       # the anchors estimate's prior: metadata | sources | population


@dataclass
class PredictionReport:
    model: str
    predictions: list[TargetPrediction]
    missing_sources: list[str] = field(default_factory=list)   # current-fit sources the model lacks
    restricted_fit: str | None = None                          # the restricted fit used (made or reused)
    made_fit: bool = False                                      # True when this call fitted it
    notes: list[str] = field(default_factory=list)


def present_sources(con: duckdb.DuckDBPyConnection, model: str) -> list[str]:
    """The source benchmarks ``model`` has usable scores for (the rule: view ``model_sources``)."""
    rows = con.execute("SELECT benchmark FROM model_sources WHERE model = ? AND present ORDER BY benchmark",
                       [model]).fetchall()
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


def targets_without_scores(con: duckdb.DuckDBPyConnection, targets: list[str]) -> list[str]:
    """The ``targets`` no model has a usable score for: a restricted fit has nothing to train them on
    (a warehouse that imported its current fit from a PACE-Bench folder may hold no target scores)."""
    scored = {t for (t,) in con.execute("SELECT DISTINCT benchmark FROM scores WHERE score IS NOT NULL AND "
                                        "benchmark IN (SELECT unnest(?::VARCHAR[]))", [targets]).fetchall()}
    return [t for t in targets if t not in scored]


def fit_restricted(con: duckdb.DuckDBPyConnection, model: str, sources: list[str], settings: dict, reopen=None):
    """Fit a proxy on ``sources`` only, for ``model``, and record which current fits it stands in for;
    returns the FitReport.

    It is fitted with the current fit's method and settings. A current fit imported from a PACE-Bench
    folder (method ``pace-bench``) holds weights made elsewhere, with nothing here to refit them with:
    its restricted fit is a fit of this warehouse's own, with ``pace fit``'s defaults (method
    ``default``, count 100, B 300, seed 42) on ``sources``, trained on the models here with target scores.
    """
    current = {} if settings["method"] == IMPORTED_METHOD else {
        "method": settings["method"], "count": settings["count"], "B": settings["B"], "seed": settings["seed"]}
    req = FitRequest(**current, sources=sources, targets=settings["targets"], level=settings["level"],
                     tasks=("abs",), restricted_for=model)
    writer = {"con": con}

    def reopened(read_con):
        writer["con"] = reopen(read_con)
        return writer["con"]

    report = fit_and_store(con, req, reopen=reopened if reopen is not None else None)
    # fit_and_store has committed its rows; a kill before this leaves a restricted fit that no current fit
    # claims, which restricted_fits ignores unless it matches by method and budget (and predict makes anew)
    writer["con"].execute("""
        UPDATE proxy_fits AS r SET restricted_from = c.fit_id
        FROM current_fits AS c
        WHERE r.fit_id = ? AND c.task = r.task AND c.target = r.target""", [report.fit_id])
    return report


def read_predictions(con: duckdb.DuckDBPyConnection, model: str, *, restrict: bool = True) -> list[TargetPrediction]:
    """``model``'s rows of ``predictions`` (``restrict=False``: of the current fits only)."""
    source = "predictions AS p" if restrict else "fit_predictions AS p"
    extra = "p.anchors, p.prior" if restrict else "0, NULL"
    rows = con.execute(f"""
        SELECT p.target, p.predicted, p.low, p.high, p.coverage, p.n_scored, p.n_instances, p.method, p.fit_id,
               p.ability, p.ability_distance, p.out_of_range, p.range_side, p.sources, p.restricted,
               CASE WHEN p.method = 'anchors' THEN NULL ELSE f.loocv_mae END, {extra}
        FROM {source}
        LEFT JOIN proxy_fits AS f ON f.fit_id = p.fit_id AND f.task = 'abs' AND f.target = p.target
        WHERE p.model = ?{'' if restrict else ' AND NOT p.restricted'} ORDER BY p.target""", [model]).fetchall()
    return [TargetPrediction(*r[:13], list(r[13] or []), bool(r[14]), r[15], int(r[16] or 0), r[17])
            for r in rows]


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
