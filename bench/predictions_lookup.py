"""`predictions` for one model: this tree's views against an earlier commit's, on one warehouse, alternated.

Issue 19 made a model's prediction independent of which other models were predicted: `predictions` now
decides which fits a model may use from the source benchmarks it has (view `model_sources`, which counts
every source benchmark's instances over all models). This measures what that costs per lookup. The
earlier commit's `restricted_fits` and `predictions` are created as temporary views (`*_before`) on the
same read-only connection, so both read the same data and cache; calls alternate between the two.

The warehouse is copied first, and given stand-in restricted fits (the current abs fit's rows under
another fit_id, `restricted_for` set, sources without one benchmark): their rows cost what a real
restricted fit's rows cost, without minutes of fitting. Run on a warehouse with a fit, e.g. the one
bench/scale.py leaves in --work:

    .venv/bin/python bench/predictions_lookup.py --db /tmp/scale-work/100/pace.duckdb --before main
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "predictions_lookup.json"
sys.path.insert(0, str(REPO))


def view_text(commit: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def add_stand_in_restricted_fits(db: Path, count: int) -> list[str]:
    """``count`` copies of the current abs fit as restricted fits, each without one source benchmark."""
    from warehouse.connect import connect

    con = connect(db)
    try:
        fit_id, sources = con.execute("SELECT any_value(fit_id), any_value(sources) FROM current_fits "
                                      "WHERE task = 'abs'").fetchone()
        made = []
        for k, dropped in enumerate(sorted(sources)[:count]):
            new = f"{fit_id}-restricted-{k}"
            kept = [s for s in sources if s != dropped]
            columns = [c for (c,) in con.execute("SELECT column_name FROM (DESCRIBE proxy_fits)").fetchall()
                       if c not in ("fit_id", "sources", "restricted_for", "restricted_from", "created_at")]
            has_parent = "restricted_from" in [c for (c,) in con.execute(
                "SELECT column_name FROM (DESCRIBE proxy_fits)").fetchall()]
            con.execute(f"""INSERT INTO proxy_fits (fit_id, sources, restricted_for, created_at,
                                                    {'restricted_from, ' if has_parent else ''}{', '.join(columns)})
                            SELECT ?, ?::VARCHAR[], 'bench-model', created_at + INTERVAL 1 SECOND,
                                   {'fit_id, ' if has_parent else ''}{', '.join(columns)}
                            FROM proxy_fits WHERE fit_id = ? AND task = 'abs'""", [new, kept, fit_id])
            for table in ("proxy_weights", "proxy_leaves", "proxy_ability_instances"):
                cols = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()]
                rest = ", ".join(c for c in cols if c != "fit_id")
                con.execute(f"INSERT INTO {table} (fit_id, {rest}) SELECT ?, {rest} FROM {table} WHERE fit_id = ?"
                            + (" AND benchmark <> ?" if table == "proxy_weights" else ""),
                            [new, fit_id] + ([dropped] if table == "proxy_weights" else []))
            made.append(new)
        return made
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a warehouse with a current abs fit (copied first)")
    parser.add_argument("--before", default="main", help="the commit whose views are compared")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--restricted", type=int, default=3, help="stand-in restricted fits to add")
    args = parser.parse_args()

    from warehouse.connect import connect

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pace.duckdb"
        shutil.copy(args.db, db)
        stand_ins = add_stand_in_restricted_fits(db, args.restricted)
        con = connect(db, read_only=True)
        restricted = view_text(args.before, "sql/052_restricted_fits.sql")
        predictions = view_text(args.before, "sql/054_predictions.sql")
        con.execute(restricted.replace("CREATE OR REPLACE VIEW restricted_fits", "CREATE TEMP VIEW restricted_fits_before"))
        con.execute(predictions.replace("CREATE OR REPLACE VIEW predictions", "CREATE TEMP VIEW predictions_before")
                    .replace("FROM restricted_fits ", "FROM restricted_fits_before "))
        models = [m for (m,) in con.execute("SELECT model FROM models WHERE known ORDER BY model").fetchall()]
        model = models[len(models) // 2]
        rows = con.execute("SELECT count(*) FROM scores").fetchone()[0]
        query = "SELECT target, predicted, low, high, coverage FROM {view} WHERE model = ? ORDER BY target"
        times: dict[str, list[float]] = {"before": [], "after": []}
        answers = {}
        for k in range(2 * args.calls + 2):              # the first call of each warms up
            which = "after" if k % 2 else "before"
            started = time.perf_counter()
            answers[which] = con.execute(query.format(view="predictions" if which == "after" else "predictions_before"),
                                         [model]).fetchall()
            if k >= 2:
                times[which].append(time.perf_counter() - started)
        con.close()
    out = {"load_average": [round(x, 1) for x in os.getloadavg()], "db_rows": rows, "models": len(models), "model": model, "calls": args.calls, "before": args.before,
           "stand_in_restricted_fits": len(stand_ins),
           "same_answer": answers["before"] == answers["after"]}
    for which, values in times.items():
        values.sort()
        out[which] = {"p50_ms": round(1000 * statistics.median(values), 1),
                      "p95_ms": round(1000 * values[int(round(0.95 * (len(values) - 1)))], 1)}
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
