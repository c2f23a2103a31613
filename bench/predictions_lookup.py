"""`predictions` and `anchor_estimates` for one model: this tree's schema against an earlier commit's, on the same
warehouse, alternated in one process.

The warehouse (``--db``, left untouched) is copied twice. One copy gets the earlier commit's ``sql/`` (each file
applied in order, as a write open of that version would: views and macros replaced, tables kept), the other this
tree's (a write open: the migration fills the per-fit constants a lookup reads, e.g. ``proxy_leaves.level``). Both
are then opened read-only with plain DuckDB, so both read the same rows through their own views; calls alternate
between the two, the first of each warms up. Per view and model: p50 / p95 of ``SELECT * FROM view WHERE model = ?``,
and, from DuckDB's profiler, how much of one call is planning (binding + optimizing) rather than executing.
Same answer: the whole ``predictions`` of both copies, numbers within 1e-9, everything else equal.

Run on a warehouse with a current fit (and anchor fits), e.g. the real walkthrough warehouse or the one
bench/scale.py leaves in --work:

    .venv/bin/python bench/predictions_lookup.py --db /tmp/real/pace.duckdb --label real --before main
    .venv/bin/python bench/predictions_lookup.py --db /tmp/scale-work/100/pace.duckdb --label synthetic-100

Figures are merged into bench/results/predictions_lookup.json under ``--label`` (machine paths never written).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "predictions_lookup.json"
sys.path.insert(0, str(REPO))

VIEWS = ("predictions", "anchor_estimates", "source_predictions")
TOLERANCE = 1e-9


def commit_sql(commit: str) -> list[tuple[str, str]]:
    """(file name, text) of every ``sql/*.sql`` at ``commit``, in the order a write open applies them."""
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "--name-only", f"{commit}:sql"], check=True,
                           capture_output=True, text=True).stdout.split()
    return [(name, subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:sql/{name}"], check=True,
                                  capture_output=True, text=True).stdout)
            for name in sorted(n for n in names if n.endswith(".sql"))]


def apply_commit_schema(db: Path, commit: str) -> None:
    con = duckdb.connect(str(db))
    try:
        for name, text in commit_sql(commit):
            try:
                con.execute(text)
            except duckdb.Error as exc:
                raise SystemExit(f"{commit}:sql/{name} does not apply to this warehouse: {exc}") from exc
    finally:
        con.close()


def apply_this_schema(db: Path) -> None:
    from warehouse.connect import apply_schema, connect

    con = connect(db)               # a write open migrates it (and fills the per-fit constants)
    try:
        apply_schema(con)           # also when the file was already stamped with this tree's schema
    finally:
        con.close()


def same_answer(before: duckdb.DuckDBPyConnection, after: duckdb.DuckDBPyConnection) -> dict:
    query = "SELECT * FROM predictions ORDER BY model, target"
    a, b = before.execute(query).fetchall(), after.execute(query).fetchall()
    worst, other = 0.0, 0
    if len(a) != len(b):
        return {"rows_before": len(a), "rows_after": len(b), "same": False}
    for x, y in zip(a, b):
        for u, w in zip(x, y):
            if isinstance(u, float) and isinstance(w, float):
                if not (math.isnan(u) and math.isnan(w)):
                    worst = max(worst, abs(u - w))
            elif u != w:
                other += 1
    return {"rows": len(a), "max_abs_diff": worst, "other_differences": other,
            "same": other == 0 and worst <= TOLERANCE}


def planning_share(con: duckdb.DuckDBPyConnection, view: str, model: str, folder: Path) -> dict:
    """From DuckDB's profiler, best of 5 calls: the call's time and the part spent planning (bind + optimize)."""
    out = folder / "profile.json"
    best = None
    for _ in range(5):
        con.execute("PRAGMA enable_profiling = 'json'")
        con.execute(f"PRAGMA profiling_output = '{out}'")
        con.execute(f"SELECT * FROM {view} WHERE model = ?", [model]).fetchall()
        con.execute("PRAGMA disable_profiling")
        p = json.loads(out.read_text())
        row = (p["query"]["total_time"], p["planner"]["total_time"] + p["optimizer"]["total_time"]
               + p["physical_planner"]["total_time"])
        best = row if best is None or row[0] < best[0] else best
    return {"profiled_ms": round(1000 * best[0], 1), "planning_ms": round(1000 * best[1], 1)}


def percentiles(values: list[float]) -> dict:
    values = sorted(values)
    return {"p50_ms": round(1000 * statistics.median(values), 1),
            "p95_ms": round(1000 * values[int(round(0.95 * (len(values) - 1)))], 1)}


def lookup_models(con: duckdb.DuckDBPyConnection, wanted: list[str]) -> list[str]:
    """The models to look up: ``wanted``, else a model the anchor fits serve (its anchors estimate is computed)
    and the middle known model (sources only)."""
    if wanted:
        return wanted
    served = con.execute("SELECT min(model) FROM anchor_estimates").fetchone()[0]
    known = [m for (m,) in con.execute("SELECT model FROM models WHERE known ORDER BY model").fetchall()]
    return [m for m in dict.fromkeys([served, known[len(known) // 2] if known else None]) if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a warehouse with a current fit (copied first)")
    parser.add_argument("--label", required=True, help="the entry of the results file (e.g. real, synthetic-100)")
    parser.add_argument("--before", default="main", help="the commit whose schema is compared")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--models", default="", help="comma-separated models (default: see lookup_models)")
    parser.add_argument("--views", default=",".join(VIEWS))
    args = parser.parse_args()

    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        copies = {"before": folder / "before.duckdb", "after": folder / "after.duckdb"}
        for which, db in copies.items():
            shutil.copy(args.db, db)
        apply_commit_schema(copies["before"], args.before)
        apply_this_schema(copies["after"])
        cons = {which: duckdb.connect(str(db), read_only=True) for which, db in copies.items()}
        rows = cons["after"].execute("SELECT count(*) FROM scores").fetchone()[0]
        n_models = cons["after"].execute("SELECT count(*) FROM models").fetchone()[0]
        answer = same_answer(cons["before"], cons["after"])
        models = lookup_models(cons["after"], [m for m in args.models.split(",") if m])
        figures: dict = {}
        for view in args.views.split(","):
            for model in models:
                times: dict[str, list[float]] = {"before": [], "after": []}
                for k in range(args.calls + 1):
                    for which in ("before", "after") if k % 2 else ("after", "before"):
                        started = time.perf_counter()
                        cons[which].execute(f"SELECT * FROM {view} WHERE model = ?", [model]).fetchall()
                        if k:                                          # the first call of each warms up
                            times[which].append(time.perf_counter() - started)
                entry = {which: percentiles(values) for which, values in times.items()}
                for which in ("before", "after"):
                    entry[which].update(planning_share(cons[which], view, model, folder))
                figures.setdefault(view, {})[model] = entry
                print(f"{view:20s} {model:28s} before p50 {entry['before']['p50_ms']:6.1f} p95 "
                      f"{entry['before']['p95_ms']:6.1f} (planning {entry['before']['planning_ms']:5.1f})   after p50 "
                      f"{entry['after']['p50_ms']:6.1f} p95 {entry['after']['p95_ms']:6.1f} (planning "
                      f"{entry['after']['planning_ms']:5.1f}) ms", flush=True)
        for con in cons.values():
            con.close()
    out = {"before": args.before, "db_rows": rows, "models": n_models, "calls": args.calls,
           "load_average_start": load_before, "load_average_end": [round(x, 2) for x in os.getloadavg()],
           "cpus": os.cpu_count(), "same_answer": answer, "lookups": figures}
    print(json.dumps({k: v for k, v in out.items() if k != "lookups"}, indent=1))
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if "runs" not in results:                      # the earlier file: one run, kept as it was
        results = {"runs": {"earlier": results} if results else {}}
    results["runs"][args.label] = out
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
