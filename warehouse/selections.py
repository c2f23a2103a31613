"""Imported selections: a selections CSV in the published schema into loocv_selections, and the checks
every imported selection passes (a PACE-Bench folder too, see ``warehouse.pace_bench``).

A selection names source instances and gives each a weight. One that names benchmarks or instances this
warehouse does not have would predict every model from its intercept alone (all-unknown ids give one
constant prediction for every model); a repeated record doubles its instance's weight; a non-finite
weight poisons every sum. So :func:`check_records` refuses them, in one line saying what and how many;
``allow_unknown`` lets unknown benchmarks and ids through (a selection made elsewhere, to plan and run
here before any model has those scores) and says what that means.
"""
from __future__ import annotations

import csv
import json
import math
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa

from warehouse.errors import UserError
from warehouse.registered import registered

REQUIRED = ["mode", "fold", "target", "benchmark", "subdir", "instance_id"]
KEY = ("benchmark", "subdir", "instance_id")
#: examples shown in a message
EXAMPLES = 3


def _instance(record: dict) -> str:
    return "/".join(str(record[k]) for k in KEY if record[k] != "")


def _examples(records: list[dict]) -> str:
    shown = ", ".join(f"{r['at']} {_instance(r)}" for r in records[:EXAMPLES])
    return shown + (", ..." if len(records) > EXAMPLES else "")


def _unknown_ids(con: duckdb.DuckDBPyConnection, records: list[dict]) -> set[tuple[str, str, str]]:
    """The (benchmark, subdir, instance_id) keys of ``records`` with no row in ``scores``."""
    keys = sorted({tuple(r[k] for k in KEY) for r in records})
    if not keys:
        return set()
    with registered(con, _selection_keys=pa.table({k: [key[i] for key in keys] for i, k in enumerate(KEY)})):
        return set(con.execute("""
            SELECT k.benchmark, k.subdir, k.instance_id FROM _selection_keys AS k
            WHERE NOT EXISTS (SELECT 1 FROM scores AS s WHERE s.benchmark = k.benchmark AND s.subdir = k.subdir
                                                          AND s.instance_id = k.instance_id)""").fetchall())


def check_records(con: duckdb.DuckDBPyConnection, records: list[dict], where: str, *, group: tuple[str, ...],
                  allow_unknown: bool = False) -> list[str]:
    """Refuse a selection that would predict wrongly; return notes on what ``allow_unknown`` let through.

    ``records``: dicts with ``benchmark``, ``subdir``, ``instance_id``, ``weight`` (a float, maybe not
    finite), ``at`` (``file:line``, for messages) and the ``group`` fields that together with the instance
    make a record unique (``target``; a CSV also ``mode``, ``fold``). Raises one :class:`UserError` line
    naming every problem with its count and first examples: non-finite weights and repeated records
    always; benchmarks that are not source benchmarks here and instances with no score row here unless
    ``allow_unknown``."""
    always, unknown, notes = [], [], []
    bad = [r for r in records if r["weight"] is None or not math.isfinite(r["weight"])
           or (r.get("center") is not None and not math.isfinite(r["center"]))]
    if bad:
        always.append(f"{len(bad)} record(s) with a weight or center that is not a finite number "
                      f"({_examples(bad)})")
    seen: Counter = Counter()
    repeated = []
    for r in records:
        key = tuple(r[k] for k in group + KEY)
        seen[key] += 1
        if seen[key] == 2:
            repeated.append(r)
    if repeated:
        extra = sum(n - 1 for n in seen.values() if n > 1)
        always.append(f"{extra} repeated record(s) of {len(repeated)} instance(s), which would add up their "
                      f"weights ({_examples(repeated)})")
    sources = {b for (b,) in con.execute("SELECT benchmark FROM benchmarks WHERE role = 'source'").fetchall()}
    foreign = Counter(r["benchmark"] for r in records if r["benchmark"] not in sources)
    if foreign:
        names = ", ".join(f"{b} ({n})" for b, n in sorted(foreign.items())[:EXAMPLES])
        unknown.append(f"{sum(foreign.values())} record(s) of {len(foreign)} benchmark(s) that are not source "
                       f"benchmarks here: {names}{', ...' if len(foreign) > EXAMPLES else ''}")
    missing = _unknown_ids(con, [r for r in records if r["benchmark"] in sources])
    absent = [r for r in records if tuple(r[k] for k in KEY) in missing]
    if absent:
        unknown.append(f"{len(absent)} record(s) name instances this warehouse has no row for "
                       f"({_examples(absent)})")
    problems = always + ([] if allow_unknown else unknown)
    if problems:
        hint = " (--allow-unknown imports unknown benchmarks and instances anyway)" if unknown and not always else ""
        raise UserError(f"{where}: {len(records)} records, refused: " + "; ".join(problems) + hint)
    if unknown:
        notes.append("imported with --allow-unknown: " + "; ".join(unknown))
        by_group: dict[tuple, list[dict]] = {}
        for r in records:
            by_group.setdefault(tuple(r[k] for k in group), []).append(r)
        for g, members in sorted(by_group.items()):
            if all(r["benchmark"] not in sources or tuple(r[k] for k in KEY) in missing for r in members):
                notes.append(f"{'/'.join(map(str, g))}: none of its {len(members)} instances is in this warehouse, "
                             "so every model gets the same prediction until models are scored on them "
                             "(pace plan / pace run)")
    return notes


def _weight(text: str | None, where: str) -> float | None:
    if text in (None, ""):
        return None
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{where}: weight {text!r} is not a number") from None


def import_selections(con: duckdb.DuckDBPyConnection, path: Path, name: str | None = None, *,
                      allow_unknown: bool = False) -> tuple[str, int, list[str]]:
    """Returns (run_id, rows, notes). Rows keep fold, target, instance keys and weight; side is unknown
    ('?'). The rows pass :func:`check_records` (an empty weight is allowed: the CSV schema has it optional)."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{path}:1: missing column(s) {', '.join(missing)} (published schema: "
                            "mode,fold,target,benchmark,subdir,instance_id,col_idx,weight)")
        records = []
        for line, row in enumerate(reader, start=2):
            if not row["benchmark"] or not row["instance_id"]:
                raise UserError(f"{path}:{line}: empty benchmark or instance_id")
            records.append({"mode": row["mode"], "fold": row["fold"], "target": row["target"],
                            "benchmark": row["benchmark"], "subdir": row["subdir"] or "",
                            "instance_id": row["instance_id"], "weight": _weight(row.get("weight"), f"{path}:{line}"),
                            "at": f"{path.name}:{line}"})
    if not records:
        raise UserError(f"{path}: no rows")
    weighted = [dict(r, weight=0.0) if r["weight"] is None else r for r in records]
    notes = check_records(con, weighted, str(path), group=("mode", "fold", "target"), allow_unknown=allow_unknown)
    run_id = name or f"import-{path.stem}"
    modes = sorted({r["mode"] for r in records})
    targets = sorted({r["target"] for r in records})
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM loocv_selections WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM loocv_runs WHERE run_id = ?", [run_id])
        con.execute("INSERT INTO loocv_runs (run_id, task, mode, method, params, sources, targets, models, seconds, "
                    "created_at) VALUES (?, 'abs', ?, 'imported', ?::JSON, NULL, ?, [], NULL, current_localtimestamp())",
                    [run_id, ",".join(modes), json.dumps({"file": path.name}), targets])
        con.executemany("INSERT INTO loocv_selections VALUES (?, ?, ?, '?', ?, ?, ?, NULL, ?, NULL)",
                        [(run_id, r["fold"], r["target"], r["benchmark"], r["subdir"], r["instance_id"], r["weight"])
                         for r in records])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return run_id, len(records), notes
