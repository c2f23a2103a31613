"""`pace report OUT.html`: what the warehouse knows, as one self-contained HTML page.

This module gathers the page's content from the warehouse's own views and tables (``predictions``
through :meth:`Warehouse.predict`, the plan through :meth:`Warehouse.plan`, ``current_fits``,
``target_means``, ``loocv_runs`` / ``loocv_predictions`` / ``loocv_metrics``, ``proxy_instances``)
into one JSON-able dict; :mod:`warehouse.report_html` draws it (static SVG and tables that read
without JavaScript, plus a little inline script for hover and the target filter). Nothing is fetched
when the page is viewed: the data and the script are inside the file.

Sections:

* per asked model: the predicted score per target with its interval, drawn on a strip of the training
  models' true scores; coverage, which proxy answered (full or restricted fit, its sources), the
  out-of-range note; and what the next plan buys (calls per benchmark against the interval half-width
  they leave), and per target the agentic anchors `pace plan --anchors N_ANCHORS` lists: how many, their
  expected cost, and the interval they start from;
* the fit: the current fits, and the stored LOOCV runs (latest run per method and split): MAE,
  Spearman and interval coverage per target, the methods side by side with the baselines, and the
  predicted-vs-true scatter per target and split of the fit's method;
* instance difficulty: the selected instances that move predictions most and least.
"""
from __future__ import annotations

import json
import math
from contextlib import closing
from datetime import datetime
from pathlib import Path

import duckdb

from warehouse import methods
from warehouse.errors import UserError
from warehouse.fit import held_out_coverage, out_of_range_models
from warehouse.report_html import MARKER, render

#: how many of the most and of the least informative selected instances are listed
N_INSTANCES = 12
#: interval level used for LOOCV coverage when no fit says otherwise
DEFAULT_LEVEL = 0.8
#: agentic anchors listed per target (`pace plan --anchors 10`: the budget bench/anchors.py measures first)
N_ANCHORS = 10


def _num(value) -> float | None:
    """A finite float, else None (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _rows(con: duckdb.DuckDBPyConnection, query: str, params=None) -> list[dict]:
    rel = con.execute(query, params or [])
    names = [d[0] for d in rel.description]
    return [dict(zip(names, r)) for r in rel.fetchall()]


# ------------------------------------------------------------------------------------------- fits
def current_fits(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """One row per target of the current Goal A fits."""
    out = []
    for r in _rows(con, """
            SELECT f.target, f.method, f.fit_id, f.budget, len(f.trained_on) AS trained_on, f.interval_level,
                   f.loocv_mae, f.params, f.created_at, f.link,
                   (SELECT count(DISTINCT (benchmark, subdir, instance_id)) FROM proxy_instances AS p
                    WHERE p.fit_id = f.fit_id AND p.task = 'abs' AND p.target = f.target) AS n_instances
            FROM current_fits AS f WHERE f.task = 'abs' ORDER BY f.target"""):
        params = json.loads(r.pop("params")) if r.get("params") else {}
        r["loo_coverage"] = _num(params.get("interval_loo_coverage"))
        r["loocv_mae"] = _num(r["loocv_mae"])
        r["created_at"] = str(r["created_at"])
        out.append(r)
    return out


def training_scores(con: duckdb.DuckDBPyConnection) -> dict[str, list[dict]]:
    """Per target, the true score (``target_means.mean``) of every model its current fit trained on."""
    out: dict[str, list[dict]] = {}
    for r in _rows(con, """
            WITH trained AS (
                SELECT target, unnest(trained_on) AS model FROM current_fits WHERE task = 'abs'
            )
            SELECT t.target, t.model, m.mean AS score
            FROM trained AS t JOIN target_means AS m USING (model, target)
            WHERE m.mean IS NOT NULL ORDER BY t.target, m.mean"""):
        out.setdefault(r["target"], []).append({"model": r["model"], "score": float(r["score"])})
    return out


# ------------------------------------------------------------------------------------------ LOOCV
def loocv_runs(con: duckdb.DuckDBPyConnection, level: float) -> list[dict]:
    """The latest stored Goal A LOOCV run per (method, split), with its metrics per target (MAE and
    Spearman from ``loocv_metrics``; coverage: :func:`warehouse.fit.held_out_coverage`, the share of held-out
    truths inside the ``level`` interval the method's fit would give them, its offsets from the other
    models' residuals in the method's latest ``loo`` run: None without such a run)."""
    runs = _rows(con, """
        SELECT run_id, method, coalesce(split, 'loo') AS split, created_at, params
        FROM loocv_runs
        WHERE task = 'abs' AND mode LIKE 'loocv%'
        QUALIFY row_number() OVER (PARTITION BY method, coalesce(split, 'loo')
                                   ORDER BY created_at DESC, run_id DESC) = 1
        ORDER BY method, split""")
    for run in runs:
        params = json.loads(run.pop("params")) if run.get("params") else {}
        run["count"] = params.get("count")
        run["created_at"] = str(run["created_at"])
        run["metrics"] = {r["target"]: {"mae": _num(r["mae"]), "spearman": _num(r["spearman"]), "n": r["n_models"]}
                          for r in _rows(con, "SELECT target, mae, spearman, n_models FROM loocv_metrics "
                                              "WHERE run_id = ?", [run["run_id"]])}
        run["points"] = [{"target": p["target"], "model": p["model"], "predicted": float(p["predicted"]),
                          "actual": float(p["actual"])}
                         for p in _rows(con, """SELECT target, model, predicted, actual FROM loocv_predictions
                                                WHERE run_id = ? AND predicted IS NOT NULL AND actual IS NOT NULL
                                                ORDER BY target, model""", [run["run_id"]])]
    for method in {r["method"] for r in runs}:
        mine = [r for r in runs if r["method"] == method]
        loo = next((r for r in mine if r["split"] == "loo"), None)
        # the extrapolation residuals in the order bench/accuracy.py pools them: family, low-K, high-K
        others = sorted((r for r in mine if r is not loo),
                        key=lambda r: (r["split"] != "family", not r["split"].startswith("low"), r["split"]))
        ext: dict = {}
        for r in others:
            for p in r["points"]:
                ext.setdefault((p["model"], p["target"]), (p["predicted"], p["actual"]))
        for run in mine:
            coverage = {} if loo is None else held_out_coverage(
                _pairs(run["points"]), _pairs(loo["points"]), ext, out_of_range_models(con, run["run_id"]), level,
                logit_scale=method in methods.REGISTRY and methods.REGISTRY[method].logit_intervals)
            for target in {p["target"] for p in run["points"]} | ({"AVERAGE"} if "AVERAGE" in run["metrics"] else set()):
                run["metrics"].setdefault(target, {})["coverage"] = _num(coverage.get(target))
    return runs


def _pairs(points: list[dict]) -> dict:
    """``{(model, target): (predicted, actual)}`` of a run's points."""
    return {(p["model"], p["target"]): (p["predicted"], p["actual"]) for p in points}


# -------------------------------------------------------------------------------------- instances
def instance_informativeness(con: duckdb.DuckDBPyConnection, n: int = N_INSTANCES) -> dict:
    """The selected instances of the current abs fits ranked by how much they move predictions:
    ``sqrt(sum over targets of w_t^2 v)`` with ``w_t`` the instance's weight for target t and ``v``
    the variance of the training models' scores on it (the spread an unknown score leaves in the
    prediction, as `pace plan` counts it per benchmark). Most and least informative ``n`` each."""
    rows = _rows(con, """
        WITH selected AS (
            SELECT target, benchmark, subdir, instance_id, weight FROM proxy_instances WHERE task = 'abs'
        ),
        trained AS (
            SELECT DISTINCT unnest(trained_on) AS model FROM current_fits WHERE task = 'abs'
        ),
        spread AS (
            SELECT s.benchmark, s.subdir, s.instance_id, count(*) AS n_models, avg(s.score) AS mean_score,
                   var_pop(s.score) AS variance
            FROM scores AS s JOIN trained USING (model)
            SEMI JOIN (SELECT DISTINCT benchmark, subdir, instance_id FROM selected) AS x
              USING (benchmark, subdir, instance_id)
            WHERE s.score IS NOT NULL
            GROUP BY ALL
        )
        SELECT x.benchmark, x.subdir, x.instance_id,
               map_from_entries(list(struct_pack(k := x.target, v := x.weight) ORDER BY x.target)) AS weights,
               any_value(sp.n_models) AS n_models, any_value(sp.mean_score) AS mean_score,
               sqrt(sum(x.weight * x.weight * coalesce(sp.variance, 0))) AS informativeness
        FROM selected AS x LEFT JOIN spread AS sp USING (benchmark, subdir, instance_id)
        GROUP BY ALL
        ORDER BY informativeness DESC, x.benchmark, x.subdir, x.instance_id""")
    for r in rows:
        r["weights"] = {k: _num(v) for k, v in (r["weights"] or {}).items()}
        r["mean_score"] = _num(r["mean_score"])
        r["informativeness"] = _num(r["informativeness"]) or 0.0
    most = rows[:n]
    least = list(reversed(rows[max(n, len(rows) - n):]))
    return {"n_selected": len(rows), "most": most, "least": least}


# ----------------------------------------------------------------------------------------- models
def model_section(wh, model: str) -> dict:
    """Prediction and plan of one asked model (see :meth:`Warehouse.predict` / :meth:`Warehouse.plan`)."""
    section: dict = {"model": model}
    report = wh.predict(model, allow_partial=True)
    section["interval_level"] = report.interval_level
    section["missing_sources"] = list(report.missing_sources)
    section["restricted_fit"] = report.restricted_fit
    section["notes"] = list(report.notes)
    section["predictions"] = [{
        "target": p.target, "predicted": _num(p.predicted), "low": _num(p.low), "high": _num(p.high),
        "coverage": _num(p.coverage), "n_scored": p.n_scored, "n_instances": p.n_instances, "method": p.method,
        "fit_id": p.fit_id, "restricted": p.restricted, "sources": list(p.sources), "out_of_range": p.out_of_range,
        "range_side": p.range_side, "range_reason": p.range_reason, "ability_distance": _num(p.ability_distance),
        "loocv_mae": _num(p.loocv_mae), "anchors": p.anchors, "prior": p.prior,
    } for p in report.predictions]
    # an anchors estimate stands on the model's own target results, not on the proxy's source instances
    low = [p["target"] for p in section["predictions"] if p["method"] != "anchors" and (p["coverage"] or 0) < 0.9]
    if low:
        section["notes"].append(f"coverage below 90% for {', '.join(low)}: a missing score counts as the training "
                                "models' mean, so these predictions lean on the others")
    plan = wh.plan(model, anchors=N_ANCHORS)
    section["plan"] = {
        "instances": len(plan.rows), "calls": len(plan.calls), "targets": list(plan.targets),
        "now": {t: _num(v) for t, v in plan.interval_half_width_now.items()},
        "zero_weight_left_out": plan.zero_weight_left_out,
        "per_benchmark": [{"benchmark": r["benchmark"], "calls": r["calls"],
                           "instances": r["instances"], "share": _num(r["share"]),
                           "half_width": {t: _num(v) for t, v in r["half_width"].items()}}
                          for r in plan.per_benchmark],
        "anchors_asked": N_ANCHORS,
        "anchors": [{"target": t.target, "anchors_now": t.anchors, "prior": t.prior, "predicted": _num(t.predicted),
                     "low": _num(t.low), "high": _num(t.high), "listed": len(t.rows),
                     "expected_cost": _num(t.cost) if any(r.expected_cost is not None for r in t.rows) else None,
                     "unknown_cost": sum(r.expected_cost is None for r in t.rows)} for t in plan.anchors],
        "notes": list(plan.notes),
        "restricted": plan.restricted,
    }
    return section


def collect(wh, models: list[str]) -> dict:
    """Everything the page shows, as a JSON-able dict (see the module doc)."""
    with closing(wh.connect()) as con:
        fits = current_fits(con)
        synthetic = bool(con.execute("SELECT coalesce(bool_or(synthetic), false) FROM score_files").fetchone()[0])
        n_models, n_rows = con.execute("SELECT count(DISTINCT model), count(*) FROM scores").fetchone()
    if not fits:
        raise UserError("no fitted proxy yet: run `pace fit` first (the report draws the current fits)")
    level = fits[0]["interval_level"] or DEFAULT_LEVEL
    sections = [model_section(wh, m) for m in models]
    with closing(wh.connect()) as con:
        data = {
            "title": f"Pace Warehouse report: {Path(wh.path).name}",
            "generated_at": datetime.now().isoformat(timespec="seconds"),
            "synthetic": synthetic, "n_models": n_models, "n_rows": n_rows, "interval_level": level,
            "targets": [f["target"] for f in fits], "fits": fits, "training": training_scores(con),
            "models": sections, "loocv": loocv_runs(con, level), "instances": instance_informativeness(con),
        }
    return data


def write_report(wh, out: Path, models: list[str]) -> dict:
    """Render the report for ``models`` into ``out`` (a new file, or one an earlier `pace report` wrote):
    written to a temporary file beside it and moved into place, so a failure leaves ``out`` as it was."""
    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out} is a folder; pass the HTML file to write, e.g. {out / 'report.html'}")
    if not out.parent.is_dir():
        raise UserError(f"folder {out.parent} does not exist")
    if out.exists() and MARKER not in out.read_bytes()[:4096].decode("utf-8", "replace"):
        raise UserError(f"{out} exists and was not written by `pace report`: refusing to overwrite it; move it "
                        "away or choose another file")
    data = collect(wh, models)
    html = render(data)
    tmp = out.with_name(f".{out.name}.pace-tmp")
    try:
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return data
