"""A fitted selection in the layout of the published PACE-Bench dataset: one ``<target>.jsonl`` per
agentic target, one record per selected source instance with ``benchmark``, ``subdir``,
``instance_id`` and ``weight`` (the instance's coefficient in the linear predictor).

Export writes the current abs fits that way, each record also carrying ``center`` (the training
models' mean on the instance), plus ``pace_fit.json`` with the rest of each target's predictor
(intercept, clamp, interval offsets, the models it was trained on), so importing the folder into
another warehouse gives the same predictions. Import stores a folder as a fit (``proxy_fits`` /
``proxy_weights``, method ``pace-bench``), which becomes the current abs fit of its targets:
``pace plan`` / ``pace run`` then run a selection made elsewhere, and ``predictions`` use it.
A folder without ``pace_fit.json`` (the published dataset) has its predictor completed here, as
spec §14.1 defines the weights: each center is the mean score of this warehouse's models with
target scores on the instance, the intercept their mean target score, the clamp their range.
"""
from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from warehouse.errors import UserError
from warehouse.outputs import output_run, require_empty_or_ours
from warehouse.selections import check_records
from warehouse.storing import fill_fit_constants, insert_arrow, transaction

GROUP = "pace-bench"
FIT_FILE = "pace_fit.json"
ABILITY_FILE = "pace_ability.json"   # the default method's ability scale (not a .jsonl: not a target)
METHOD = "pace-bench"
_FIT_FIELDS = ("method", "budget", "intercept", "clamp_lo", "clamp_hi", "resid_lo", "resid_hi", "interval_level",
               "mix_weight", "trained_on", "data_hash", "link", "struct_intercept", "struct_slope",
               "floor_intercept", "floor_slope", "gate_base", "gate_width", "ability_lo", "ability_hi",
               "ability_sd", "oor_lo", "oor_hi", "sources", "loocv_mae",
               # the out-of-range verdict's ranges: robust ability range, training models' release dates
               "range_lo", "range_hi", "released_lo", "released_hi")


def export_pace_bench(con: duckdb.DuckDBPyConnection, out: Path, *, overwrite: bool = False) -> dict[str, int]:
    """Write the current abs fits to ``out`` (a new or empty folder, or with ``overwrite`` one an earlier
    export of this kind wrote). Returns records per target."""
    fits = con.execute(f"""SELECT target, fit_id, {', '.join(_FIT_FIELDS)}, params::VARCHAR, created_at
                           FROM current_fits WHERE task = 'abs' ORDER BY target""").fetchall()
    if not fits:
        raise UserError("nothing to export: no fitted proxy yet (run `pace fit`)")
    rows = con.execute("""SELECT target, benchmark, subdir, instance_id, weight, center FROM proxy_instances
                          WHERE task = 'abs' ORDER BY target, benchmark, subdir, instance_id""").fetchall()
    out = Path(out)
    require_empty_or_ours(out, GROUP, overwrite)
    counts: dict[str, int] = {}
    with output_run(out, GROUP, note="pace selections export --format pace-bench") as staging:
        for target, *_ in fits:
            records = [r for r in rows if r[0] == target]
            counts[target] = len(records)
            with (staging / f"{target}.jsonl").open("w", encoding="utf-8") as fh:
                for _, benchmark, subdir, instance_id, weight, center in records:
                    fh.write(json.dumps({"benchmark": benchmark, "subdir": subdir, "instance_id": instance_id,
                                         "weight": weight, "center": center}) + "\n")
        meta = {"format": "pace-bench", "targets": {}}
        for target, fit_id, *values, params, created_at in fits:
            entry = {k: v.isoformat() if isinstance(v, date) else v for k, v in zip(_FIT_FIELDS, values)}
            entry.update(fit_id=fit_id, params=json.loads(params), created_at=created_at.isoformat())
            meta["targets"][target] = entry
        (staging / FIT_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        scale_fits = sorted({fit_id for _, fit_id, *_ in fits})
        leaves = con.execute("""SELECT benchmark, subdir, centre, scale, loading FROM proxy_leaves
                                WHERE fit_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY ALL""", [scale_fits]).fetchall()
        if leaves:   # a default-method fit: its predictor also needs the ability scale
            instances = con.execute("""SELECT DISTINCT benchmark, subdir, instance_id, centre FROM proxy_ability_instances
                                       WHERE fit_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY ALL""",
                                    [scale_fits]).fetchall()
            (staging / ABILITY_FILE).write_text(json.dumps({
                "leaves": [dict(zip(("benchmark", "subdir", "centre", "scale", "loading"), r)) for r in leaves],
                "instances": [list(r) for r in instances]}), encoding="utf-8")
    return counts


def _number(value, what: str, where: str) -> float:
    """A JSON number as a float; NaN and infinities pass (``selections.check_records`` counts them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{where}: {what} {value!r} is not a finite number")
    return float(value)


def _key(value, what: str, where: str, allow_empty: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UserError(f"{where}: {what} {value!r} is not a string")
    text = str(value).strip()
    if (not text and not allow_empty) or any(ord(c) < 32 for c in text):
        raise UserError(f"{where}: {what} {value!r} is empty or has a control character")
    return text


def read_folder(folder: Path) -> tuple[dict[str, list[dict]], dict | None, str]:
    """target -> records, the pace_fit.json content (or None) and a sha256 over every file read."""
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder of <target>.jsonl files")
    files = sorted(p for p in folder.glob("*.jsonl") if not p.name.startswith("."))
    if not files:
        raise UserError(f"{folder}: no <target>.jsonl files (one per target, one record per selected instance)")
    digest = hashlib.sha256()
    out: dict[str, list[dict]] = {}
    for path in files:
        data = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + data + b"\0")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise UserError(f"{path}:{line}: not valid UTF-8") from None
        records = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise UserError(f"{where}: not a JSON line ({exc})") from None
            if not isinstance(rec, dict):
                raise UserError(f"{where}: not a JSON object")
            missing = [k for k in ("benchmark", "instance_id", "weight") if k not in rec]
            if missing:
                raise UserError(f"{where}: missing {', '.join(missing)} (a record needs benchmark, subdir, "
                                "instance_id, weight)")
            records.append({
                "target": path.stem, "at": f"{path.name}:{number}",
                "benchmark": _key(rec["benchmark"], "benchmark", where),
                "subdir": _key(rec.get("subdir", ""), "subdir", where, allow_empty=True),
                "instance_id": _key(rec["instance_id"], "instance_id", where),
                "weight": _number(rec["weight"], "weight", where),
                "center": _number(rec["center"], "center", where) if rec.get("center") is not None else None,
            })
        if not records:
            raise UserError(f"{path}: no records")
        out[path.stem] = records
    meta = None
    if (folder / FIT_FILE).is_file():
        try:
            meta = json.loads((folder / FIT_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise UserError(f"{folder / FIT_FILE}: not JSON ({exc})") from None
        digest.update((folder / FIT_FILE).read_bytes())
    if (folder / ABILITY_FILE).is_file() and isinstance(meta, dict):
        try:
            meta["ability"] = json.loads((folder / ABILITY_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise UserError(f"{folder / ABILITY_FILE}: not JSON ({exc})") from None
        digest.update((folder / ABILITY_FILE).read_bytes())
    return out, meta, digest.hexdigest()


def import_pace_bench(con: duckdb.DuckDBPyConnection, folder: Path, name: str | None = None, *,
                      allow_unknown: bool = False) -> dict:
    """Store ``folder`` as a fit; returns {'fit_id', 'targets': {target: records}, 'derived': [...], 'notes'}.

    The records pass ``selections.check_records`` first (``allow_unknown`` as there). A target whose
    ``pace_fit.json`` entry does not say which source benchmarks it selected from (the published dataset)
    records the benchmarks of its records: a model lacking one of those gets a restricted fit."""
    selection, meta, digest = read_folder(folder)
    roles = dict(con.execute("SELECT benchmark, role FROM benchmarks").fetchall())
    for target in selection:
        if roles.get(target, "target") != "target":
            raise UserError(f"{folder / (target + '.jsonl')}: {target!r} is a {roles[target]} benchmark here, "
                            "not a target (change it with `pace benchmarks set`)")
    notes = check_records(con, [r for records in selection.values() for r in records], str(folder),
                          group=("target",), allow_unknown=allow_unknown)
    fit_id = name or f"pace-bench-{digest[:10]}"
    given = (meta or {}).get("targets", {}) if isinstance(meta, dict) else {}
    now = datetime.now().replace(microsecond=0)
    derived, fit_rows, weight_rows = [], [], []
    ability = (meta or {}).get("ability") if isinstance(meta, dict) else None
    for target, records in selection.items():
        stored = given.get(target)
        if stored and all(r["center"] is not None for r in records):
            entry = {k: stored.get(k) for k in _FIT_FIELDS}
            entry["trained_on"] = list(entry.get("trained_on") or [])
            if entry.get("link") == "logit" and not ability:
                raise UserError(f"{folder / FIT_FILE}: {target} was fitted with an ability scale (link 'logit') "
                                f"but {ABILITY_FILE} is missing beside it")
            params = {"source": folder.name, "fitted_as": stored.get("fit_id"), "params": stored.get("params")}
            centers = [r["center"] for r in records]
        else:
            entry, centers, note = _complete_here(con, target, records)
            params = {"source": folder.name, "completed_here": True}
            derived.append(target)
            notes += note
        entry.update(method=METHOD, budget=len({(r["benchmark"], r["subdir"], r["instance_id"]) for r in records}),
                     data_hash=digest)
        if not entry.get("sources"):
            entry["sources"] = sorted({r["benchmark"] for r in records})
        fit_rows.append({"fit_id": fit_id, "task": "abs", "target": target, "params": json.dumps(params),
                         "created_at": now, **entry})
        weight_rows += [(fit_id, "abs", target, r["benchmark"], r["subdir"], r["instance_id"], "pace-bench",
                         r["weight"], c) for r, c in zip(records, centers)]
    with transaction(con):
        con.execute("DELETE FROM proxy_weights WHERE fit_id = ?", [fit_id])
        con.execute("DELETE FROM proxy_fits WHERE fit_id = ?", [fit_id])
        for row in fit_rows:
            cols = list(row)
            con.execute(f"INSERT INTO proxy_fits ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                        [row[c] for c in cols])
        con.executemany("INSERT INTO proxy_weights (fit_id, task, target, benchmark, subdir, instance_id, side, "
                        "weight, center) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", weight_rows)
        con.execute("DELETE FROM proxy_leaves WHERE fit_id = ?", [fit_id])
        con.execute("DELETE FROM proxy_ability_instances WHERE fit_id = ?", [fit_id])
        if ability:
            con.executemany("INSERT INTO proxy_leaves (fit_id, benchmark, subdir, centre, scale, loading) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            [(fit_id, r["benchmark"], r["subdir"], r["centre"], r["scale"], r["loading"])
                             for r in ability.get("leaves", [])])
            inst = ability.get("instances", [])
            insert_arrow(con, "proxy_ability_instances", pa.table({
                "fit_id": [fit_id] * len(inst), "benchmark": [r[0] for r in inst], "subdir": [r[1] for r in inst],
                "instance_id": [r[2] for r in inst], "centre": pa.array([float(r[3]) for r in inst], pa.float64())}))
            fill_fit_constants(con)
    return {"fit_id": fit_id, "targets": {t: len(r) for t, r in selection.items()}, "derived": derived,
            "notes": notes}


def _complete_here(con: duckdb.DuckDBPyConnection, target: str, records: list[dict]):
    """Centers, intercept and clamp from this warehouse's models with scores on ``target``."""
    trained = [m for (m,) in con.execute("""SELECT model FROM target_means WHERE target = ? AND n_scored > 0
                                            ORDER BY model""", [target]).fetchall()]
    means = [v for (v,) in con.execute("""SELECT mean FROM target_means WHERE target = ? AND n_scored > 0""",
                                       [target]).fetchall()]
    keys = [(r["benchmark"], r["subdir"], r["instance_id"]) for r in records]
    con.execute("CREATE OR REPLACE TEMP TABLE pace_bench_keys (benchmark VARCHAR, subdir VARCHAR, instance_id VARCHAR)")
    con.executemany("INSERT INTO pace_bench_keys VALUES (?, ?, ?)", keys)
    found = {(b, s, i): c for b, s, i, c in con.execute("""
        SELECT k.benchmark, k.subdir, k.instance_id, avg(s.score)
        FROM pace_bench_keys k JOIN scores s USING (benchmark, subdir, instance_id)
        WHERE s.score IS NOT NULL AND s.model IN (SELECT unnest(?::VARCHAR[]))
        GROUP BY ALL""", [trained]).fetchall()}
    con.execute("DROP TABLE pace_bench_keys")
    notes = []
    unscored = sum(1 for k in keys if k not in found)
    if unscored:
        notes.append(f"{target}: {unscored} of {len(keys)} instances have no score from a model with {target} "
                     "scores here; their center is 0 until such a model is scored on them")
    if not trained:
        notes.append(f"{target}: no model here has {target} scores, so there is no intercept: its predictions "
                     "are NULL (plan and run work)")
    entry = {"intercept": sum(means) / len(means) if means else None,
             "clamp_lo": min(means) if means else None, "clamp_hi": max(means) if means else None,
             "resid_lo": None, "resid_hi": None, "interval_level": None, "mix_weight": None, "trained_on": trained}
    return entry, [found.get(k, 0.0) for k in keys], notes
