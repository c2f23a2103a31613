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
from collections import Counter
from dataclasses import dataclass, field

import duckdb

from warehouse import stored_predictions
from warehouse.errors import pace_command
from warehouse.fit import FitRequest, fit_and_store
from warehouse.pace_bench import METHOD as IMPORTED_METHOD

#: anchors per target the notes suggest: 10 adaptive anchors take the held-out error to 3.4 pp on loo and
#: 3.3 pp on low-3 (bench/results/anchors_experiments.md, section 3)
PLACING_ANCHORS = 10


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
    range_reason: str | None       # 'ability' | 'release date' | None: which check gave the verdict
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


def roles_changed(con: duckdb.DuckDBPyConnection, settings: dict) -> list[str]:
    """How the roles of the current fit's benchmarks changed since it was made (`pace benchmarks set`), as
    'swtbench: target -> source'; empty when its targets are still targets and its sources still sources."""
    role = dict(con.execute("SELECT benchmark, role FROM benchmarks").fetchall())
    return [f"{b}: {was} -> {role.get(b, 'unknown')}"
            for was, names in (("target", settings["targets"]), ("source", settings["sources"]))
            for b in names if role.get(b) != was]


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
    """``model``'s rows of ``predictions`` (``restrict=False``: of the current fits only): the stored rows
    while their inputs are unchanged (``stored_predictions``), else computed by the view."""
    rows = _prediction_rows(con, model, stored_predictions.lookup_relation(),
                            [model, model, stored_predictions.rule_stamp()], True) if restrict else []
    if not rows:
        rows = _prediction_rows(con, model, "predictions" if restrict else "fit_predictions", [], restrict)
    return [TargetPrediction(*r[:14], list(r[14] or []), bool(r[15]), r[16], int(r[17] or 0), r[18])
            for r in rows]


def _prediction_rows(con: duckdb.DuckDBPyConnection, model: str, relation: str, params: list,
                     restrict: bool) -> list[tuple]:
    extra = "p.anchors, p.prior" if restrict else "0, NULL"
    return con.execute(f"""
        SELECT p.target, p.predicted, p.low, p.high, p.coverage, p.n_scored, p.n_instances, p.method, p.fit_id,
               p.ability, p.ability_distance, p.out_of_range, p.range_side, p.range_reason, p.sources, p.restricted,
               CASE WHEN p.method = 'anchors' THEN NULL ELSE f.loocv_mae END, {extra}
        FROM {relation} AS p
        LEFT JOIN proxy_fits AS f ON f.fit_id = p.fit_id AND f.task = 'abs' AND f.target = p.target
        WHERE p.model = ?{'' if restrict else ' AND NOT p.restricted'} ORDER BY p.target""",
                       params + [model]).fetchall()


def _pct(share: float) -> str:
    """A share as `pace predict` prints it in its table (one decimal), so a note's numbers are the table's."""
    return f"{100 * share:.1f} %"


def _bounds(rows: list[TargetPrediction], bound: str) -> str:
    """The bound most targets print, and the others by name: '1.0 %' or '1.0 % (commit0 0.1 %)'."""
    shown = {p.target: _pct(getattr(p, bound)) for p in rows}
    common = Counter(shown.values()).most_common(1)[0][0]
    others = [f"{t} {v}" for t, v in shown.items() if v != common]
    return common + (f" ({', '.join(others)})" if others else "")


def placing_hint(con: duckdb.DuckDBPyConnection, model: str) -> str | None:
    """What places a model the sources cannot: '`pace plan M --anchors 10` places it for about $X' (X from
    anchor_costs: per target of the current anchor fits, PLACING_ANCHORS times the median expected cost of
    its instances for this model), without the cost when none is known; None without anchor item models, or
    when every one was trained on the model (its target rows are known: `pace plan` lists nothing for it)."""
    fits, cost = con.execute("""
        WITH per_target AS (
            SELECT benchmark, least(?, count(*)) * median(expected_cost) AS cost
            FROM anchor_costs WHERE model = ? GROUP BY benchmark)
        SELECT (SELECT count(*) FROM current_anchor_fits WHERE NOT list_contains(trained_on, ?)), sum(cost)
        FROM per_target""", [PLACING_ANCHORS, model, model]).fetchone()
    if not fits:
        return None
    line = f"`{pace_command('plan', model, '--anchors', PLACING_ANCHORS)}`"
    return f"{line} places it for about ${cost:,.0f}" if cost else f"{line} lists the agentic runs that place it"


def out_of_range_notes(con: duckdb.DuckDBPyConnection, model: str, predictions: list[TargetPrediction]) -> list[str]:
    """One sentence per (side, reason) of the sources' predictions flagged out of range (anchored ones keep
    their own interval and get none): why, and what the interval now reaches, in the numbers it prints.
    Reason 'few sources' (the model has scores on under half of the current fit's source benchmarks, side
    'both') reads 'the sources cannot place this model'."""
    flagged = [p for p in predictions if p.out_of_range and p.method != "anchors"]
    if not flagged:
        return []
    hint = placing_hint(con, model)
    notes = []
    for side, reason in dict.fromkeys((p.range_side, p.range_reason) for p in flagged):
        rows = [p for p in flagged if (p.range_side, p.range_reason) == (side, reason)]
        targets = ", ".join(p.target for p in rows)
        if reason == "few sources":
            settings = current_fit_settings(con)
            fit_sources = settings["sources"] if settings else []
            have = [b for b in present_sources(con, model) if b in fit_sources]
            partial = [(b, n / total) for b, n, total in con.execute(
                """SELECT benchmark, n_scored, n_instances FROM model_sources
                   WHERE model = ? AND NOT present AND n_scored > 0 ORDER BY benchmark""", [model]).fetchall()
                       if b in fit_sources]
            notes.append(f"the sources cannot place this model: it has scores for at least half the instances of "
                         f"{len(have)} of the current fit's {len(fit_sources)} source benchmarks"
                         + (f" ({', '.join(have)})" if have else "")
                         + (f"; fewer on {', '.join(f'{b} ({_pct(share)})' for b, share in partial)}" if partial else "")
                         + f", so they cannot rule out scores from {_bounds(rows, 'low')} to {_bounds(rows, 'high')}"
                         f" on {targets}")
            continue
        below = side == "below"
        if reason == "release date":        # the training dates of these rows' proxies, not every flagged one's
            date, lo, hi = con.execute("""
                SELECT any_value(r.release_date), min(f.released_lo), max(f.released_hi)
                FROM proxy_fits AS f
                JOIN (SELECT unnest(?::VARCHAR[]) AS fit_id, unnest(?::VARCHAR[]) AS target) AS these
                  USING (fit_id, target)
                LEFT JOIN model_release AS r ON r.model = ?
                WHERE f.task = 'abs'""", [[p.fit_id for p in rows], [p.target for p in rows], model]).fetchone()
            why = (f"{model} was released ({date}) {'before' if below else 'after'} every model the fit was trained "
                   f"on ({lo} to {hi})")
        else:
            far = max(p.ability_distance for p in rows)
            upto = "up to " if len({round(p.ability_distance, 2) for p in rows}) > 1 else ""
            beyond = (f"every model the fit was trained on ({upto}{far:.2f} training standard deviations beyond the "
                      f"{'weakest' if below else 'strongest'}; the prediction leans on the source-ability link)"
                      if far > 0 else
                      f"all but the {'weakest' if below else 'strongest'} of the models the fit was trained on")
            why = f"{model}'s source ability lies {side} that of {beyond}"
        reach = (f"the sources cannot rule out scores down to {_bounds(rows, 'low')}" if below else
                 f"the sources cannot rule out scores up to {_bounds(rows, 'high')}")
        notes.append(f"out of range ({targets}): {why}; {reach}")
    # what places the model, said once, after the last note
    return [n + (f"; {hint}." if hint and i == len(notes) - 1 else ".") for i, n in enumerate(notes)]
