"""``pace export DIR --format eee``: the warehouse's per-instance scores, and its predicted agentic
scores marked as predictions, in the Every Eval Ever layout (schema version 0.2.1; see
:mod:`ingest.eee`, which reads it back).

Layout (``DIR``)::

    data/<benchmark>/<model>/<uuid>.json            one aggregate per (model, benchmark)
    data/<benchmark>/<model>/<uuid>_samples.jsonl    one instance record per score row
    predictions/<model>/<uuid>.json                  one aggregate of predictions per model
    README.md                                        what the files are

Per (model, benchmark) the aggregate holds one ``evaluation_results`` entry per leaf
(``evaluation_name`` = ``benchmark`` or ``benchmark/subdir``; ``metric_config.additional_details``
names the Pace leaf and metric), ``score_details.score`` the leaf's mean over its usable scores; every
score row becomes one instance record (``sample_id`` = instance id, ``evaluation.score``,
``is_correct`` = full marks, ``token_usage`` from the runner's responses where `pace run` made the
row, ``error`` for a row without a usable score, whose ``evaluation.score`` is then 0 and must not be
read as one). Uuids are derived from the names, so a rerun writes the same file names.

The export keeps the guarantees of ``pace export`` (:mod:`warehouse.outputs`): a new or empty
folder, ``overwrite`` replacing only the files an earlier export of this format wrote, everything
written to a staging folder first.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import duckdb

from ingest.eee import PACE_BENCHMARK, PACE_KIND, PACE_METRIC, PACE_SUBDIR, SCHEMA_VERSION
from warehouse import stored_predictions
from warehouse.outputs import output_run, require_empty_or_ours

GROUP = "export --format eee"
_NAMESPACE = uuid.UUID("6f1d3c52-4e0b-4f6e-9a57-2f0e8b1d7c11")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
NO_SCORE = "no usable score in the warehouse (stored as NULL); evaluation.score 0 is a placeholder"


def _folder(name: str) -> str:
    """A path component for a model or benchmark name (uuids keep the files apart)."""
    safe = _UNSAFE.sub("_", name).strip("._") or "_"
    return safe[:80]


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x00".join(parts)))


def _library() -> dict:
    try:
        v = version("pace-warehouse")
    except PackageNotFoundError:
        v = "unknown"
    return {"name": "pace-warehouse", "version": v}


def _tokens(con: duckdb.DuckDBPyConnection, model: str, benchmark: str) -> dict:
    """(subdir, instance_id) -> token_usage of the runner call that scored a row of ``model`` (rows that
    share one call, such as ifeval's four metric subdirs, share its usage)."""
    from warehouse.plan import call_of

    rows = con.execute("""SELECT subdir, instance_id FROM scores
                          WHERE model = ? AND benchmark = ? AND origin = 'runner'""", [model, benchmark]).fetchall()
    if not rows:
        return {}
    by_call = {}
    for subdir, instance_id, p, c, r in con.execute("""
            SELECT rc.subdir, rc.instance_id, re.prompt_tokens, re.completion_tokens, re.reasoning_tokens
            FROM runner_calls AS rc JOIN responses AS re USING (request_hash)
            WHERE rc.model = ? AND rc.benchmark = ? AND re.prompt_tokens IS NOT NULL
              AND re.completion_tokens IS NOT NULL""", [model, benchmark]).fetchall():
        by_call[(subdir, instance_id)] = {"input_tokens": int(p), "output_tokens": int(c),
                                          "total_tokens": int(p) + int(c),
                                          **({"reasoning_tokens": int(r)} if r is not None else {})}
    out = {}
    for subdir, instance_id in rows:
        _, call_subdir, call_id = call_of(benchmark, subdir, instance_id)
        if (call_subdir, call_id) in by_call:
            out[(subdir, instance_id)] = by_call[(call_subdir, call_id)]
    return out


def _aggregate(model: str, benchmark: str, evaluation_id: str, leaves: list[dict], origins: list[str],
               stamp: str) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": "Pace Warehouse", "source_type": "evaluation_run" if origins == ["runner"] else "documentation",
            "source_organization_name": "Pace Warehouse export", "evaluator_relationship": "other",
            "additional_details": {PACE_KIND: "scores", "origins": ",".join(origins)}},
        "model_info": {"name": model, "id": model},
        "eval_library": _library(),
        "evaluation_results": [{
            "evaluation_name": leaf["name"],
            "source_data": {"dataset_name": benchmark, "source_type": "other"},
            "metric_config": {
                "evaluation_description": f"Pace leaf {benchmark}" + (f"/{leaf['subdir']}" if leaf["subdir"] else ""),
                "lower_is_better": False, "score_type": "continuous", "min_score": 0.0, "max_score": 1.0,
                "additional_details": {PACE_BENCHMARK: benchmark, PACE_SUBDIR: leaf["subdir"],
                                       PACE_METRIC: leaf["metric_name"]}},
            "score_details": {"score": leaf["mean"] if leaf["mean"] is not None else 0.0,
                              "details": {"n_scored": str(leaf["n_scored"]), "n_rows": str(leaf["n_rows"])},
                              "uncertainty": {"num_samples": leaf["n_scored"]}},
        } for leaf in leaves],
    }


def _record(model: str, evaluation_id: str, name: str, row: tuple, leaf_metric: str, usage: dict | None) -> dict:
    subdir, instance_id, score, metric_name = row
    meta = {PACE_SUBDIR: subdir}
    if metric_name != leaf_metric:
        meta[PACE_METRIC] = metric_name or ""
    return {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model, "evaluation_name": name,
        "sample_id": instance_id, "interaction_type": "single_turn",
        "input": {"raw": "", "reference": []}, "output": {"raw": []}, "answer_attribution": [],
        "evaluation": {"score": 0.0 if score is None else float(score), "is_correct": score is not None and score >= 1},
        "token_usage": usage, "error": NO_SCORE if score is None else None, "metadata": meta,
    }


def export_eee(con: duckdb.DuckDBPyConnection, out: Path, *, overwrite: bool = False) -> list[tuple[str, int]]:
    """Write the Every Eval Ever files (see the module doc); returns (what, count) lines."""
    out = Path(out)
    require_empty_or_ours(out, GROUP, overwrite)
    stamp = str(int(time.time()))
    pairs = con.execute("SELECT model, benchmark FROM scores GROUP BY ALL ORDER BY ALL").fetchall()
    n_records = n_aggregates = 0
    with output_run(out, GROUP, note="pace export --format eee") as staging:
        for model, benchmark in pairs:
            evaluation_id = f"pace/{benchmark}/{model}"
            rows = con.execute("""SELECT subdir, instance_id, score, metric_name FROM scores
                                  WHERE model = ? AND benchmark = ? ORDER BY subdir, instance_id""",
                               [model, benchmark]).fetchall()
            origins = [o for (o,) in con.execute("SELECT DISTINCT origin FROM scores WHERE model = ? AND benchmark = ? "
                                                 "ORDER BY 1", [model, benchmark]).fetchall()]
            usage = _tokens(con, model, benchmark)
            leaves, lines = [], []
            for subdir in dict.fromkeys(r[0] for r in rows):
                mine = [r for r in rows if r[0] == subdir]
                metrics = [r[3] for r in mine]
                common = max(set(metrics), key=lambda m: (metrics.count(m), m or ""))
                usable = [r[2] for r in mine if r[2] is not None]
                name = benchmark + (f"/{subdir}" if subdir else "")
                leaves.append({"name": name, "subdir": subdir, "metric_name": common or "",
                               "mean": sum(usable) / len(usable) if usable else None, "n_scored": len(usable),
                               "n_rows": len(mine)})
                lines += [json.dumps(_record(model, evaluation_id, name, r, common, usage.get((r[0], r[1]))),
                                     ensure_ascii=False, sort_keys=True) for r in mine]
            file_id = _uuid("scores", model, benchmark)
            folder = staging / "data" / _folder(benchmark) / _folder(model)
            folder.mkdir(parents=True, exist_ok=True)
            body = ("\n".join(lines) + "\n").encode("utf-8")
            (folder / f"{file_id}_samples.jsonl").write_bytes(body)
            agg = _aggregate(model, benchmark, evaluation_id, leaves, origins, stamp)
            agg["detailed_evaluation_results"] = {
                "format": "jsonl", "file_path": f"data/{_folder(benchmark)}/{_folder(model)}/{file_id}_samples.jsonl",
                "hash_algorithm": "sha256", "checksum": hashlib.sha256(body).hexdigest(), "total_rows": len(lines)}
            (folder / f"{file_id}.json").write_text(json.dumps(agg, indent=1, ensure_ascii=False), encoding="utf-8")
            n_records += len(lines)
            n_aggregates += 1
        n_predictions = _write_predictions(con, staging, stamp)
        (staging / "README.md").write_text(README.format(version=SCHEMA_VERSION), encoding="utf-8")
    return [("score aggregates", n_aggregates), ("instance records", n_records),
            ("prediction aggregates", n_predictions)]


def _write_predictions(con: duckdb.DuckDBPyConnection, staging: Path, stamp: str) -> int:
    """One aggregate per model with predicted target scores, marked as predictions (pace_kind)."""
    if not con.execute("SELECT count(*) FROM current_fits WHERE task = 'abs'").fetchone()[0]:
        return 0
    rows = con.execute(f"""SELECT model, target, predicted, low, high, interval_level, method, fit_id, coverage,
                                  restricted, out_of_range
                           FROM ({stored_predictions.every_model_query(con)})
                           WHERE predicted IS NOT NULL ORDER BY model, target""").fetchall()
    by_model: dict[str, list] = {}
    for r in rows:
        by_model.setdefault(r[0], []).append(r)
    for model, preds in by_model.items():
        results = []
        for _, target, predicted, low, high, level, method, fit_id, coverage, restricted, oor in preds:
            # an anchors estimate (a model's own agentic results, or its metadata alone) is no source proxy: its
            # interval is the item model's posterior, and it has no coverage of source instances
            anchors = method == "anchors"
            uncertainty = {}
            if low is not None and high is not None:
                uncertainty["confidence_interval"] = {
                    "lower": float(low), "upper": float(high), "confidence_level": float(level or 0.8),
                    "method": f"pace {method}: " + ("posterior interval of the agentic anchors item model" if anchors
                                                    else "quantiles of held-out residuals (split-conformal)")}
            details = {PACE_KIND: "prediction", "pace_method": method, "pace_fit_id": fit_id,
                       "pace_restricted": str(bool(restricted)), "pace_out_of_range": str(bool(oor))}
            if coverage is not None:
                details["pace_coverage"] = f"{coverage:.4f}"
            results.append({
                "evaluation_name": target,
                "source_data": {"dataset_name": target, "source_type": "other"},
                "metric_config": {
                    "evaluation_description": f"PREDICTED {target} score of {model} "
                                              f"({'Pace agentic anchors' if anchors else 'Pace proxy'}), "
                                              "not a measurement",
                    "lower_is_better": False, "score_type": "continuous", "min_score": 0.0, "max_score": 1.0,
                    "additional_details": details},
                "score_details": {"score": float(predicted), "uncertainty": uncertainty}})
        agg = {"schema_version": SCHEMA_VERSION, "evaluation_id": f"pace/prediction/{model}",
               "retrieved_timestamp": stamp,
               "source_metadata": {"source_name": "Pace Warehouse predictions", "source_type": "documentation",
                                   "source_organization_name": "Pace Warehouse export",
                                   "evaluator_relationship": "other",
                                   "additional_details": {PACE_KIND: "prediction"}},
               "model_info": {"name": model, "id": model}, "eval_library": _library(), "evaluation_results": results}
        folder = staging / "predictions" / _folder(model)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{_uuid('prediction', model)}.json").write_text(json.dumps(agg, indent=1, ensure_ascii=False),
                                                                     encoding="utf-8")
    return len(by_model)


README = """# Every Eval Ever export of a Pace Warehouse

Written by `pace export DIR --format eee`, following the Every Eval Ever schema version {version}
(`eval.schema.json` for the aggregates, `instance_level_eval.schema.json` for the records).

- `data/<benchmark>/<model>/<uuid>.json`: one aggregate per model and benchmark; one
  `evaluation_results` entry per Pace leaf (`benchmark` or `benchmark/subdir`), its mean score,
  and in `metric_config.additional_details` the leaf (`pace_benchmark`, `pace_subdir`) and metric
  (`pace_metric_name`).
- `data/<benchmark>/<model>/<uuid>_samples.jsonl`: one record per score row: `sample_id` (the
  instance id), `evaluation.score`, `evaluation.is_correct` (full marks), `token_usage` (only for rows
  `pace run` scored), `error` (set for a row without a usable score: its `evaluation.score` 0 is a
  placeholder, not a score). Prompts and outputs are not exported (`input.raw` is empty).
- `predictions/<model>/<uuid>.json`: PREDICTED agentic scores, not measurements: marked
  `pace_kind = prediction`, with the method, the fit and the interval
  (`score_details.uncertainty.confidence_interval`). `pace import eee` never imports them.

`pace import eee DIR` reads this folder back into a warehouse (the same score rows).
"""
