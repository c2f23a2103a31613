"""Are a refactor's predictions the same as before? Saves every method's held-out and fitted predictions on
the real tree, then compares a later tree's with them.

    .venv/bin/python bench/method_equivalence.py save /tmp/before      # on the old code
    .venv/bin/python bench/method_equivalence.py compare /tmp/before   # on the new code

``save`` ingests the real tree (../shared/pace-results) into DIR/pace.duckdb with this tree's code, runs
``pace loocv`` for every (method, task, split) of RUNS and ``pace fit`` for every method of FITS, and writes
their rows (``loocv_predictions`` / ``loocv_pair_predictions``, the ``predictions`` and ``pair_predictions``
views of each fit) as Parquet into DIR, with the seconds each command took. ``compare`` does the same into
a fresh folder and prints, per run, the max |Δ| of every numeric column against the saved rows (and the
rows present on one side only). The rows are derived from real data: keep DIR outside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "pace-results" / "standardized_results"
ENTRY = "import sys; sys.argv = ['pace'] + sys.argv[1:]; from warehouse.entry import main; main()"

#: (name, pace loocv arguments); every method whose output a refactor must keep
RUNS = [
    (f"{task}-{method}-{split}", [task, "--method", method, "--split", split, *flags])
    for task, method, flags in (("abs", "default", []), ("abs", "instance", []),
                                ("abs", "compat", ["--strict-budget"]),
                                ("pair", "default", []),
                                ("pair", "compat", ["--strict-budget", "--pin-task-a-selection"]))
    for split in ("loo", "family")
] + [("abs-compat-autotune-loo", ["abs", "--method", "compat", "--strict-budget", "--auto-tune"])]
FITS = ["default", "instance", "compat"]
#: per table: the key columns and the numeric columns compared
KEYS = {"loocv_predictions": (["model", "target"], ["predicted", "actual", "abs_error"]),
        "loocv_pair_predictions": (["model", "opponent", "target"], ["true_margin", "pred_margin", "p_win"]),
        "predictions": (["model", "target"], ["predicted", "low", "high", "ability"]),
        "pair_predictions": (["model", "opponent", "target"], ["margin", "p_win"])}


def pace(db: Path, *args: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args, "--db", str(db), "--json"], cwd=REPO,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"pace {' '.join(args)} failed: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout[done.stdout.find("{"):])


def collect(out: Path) -> dict:
    """Ingest, run and write every table into ``out``; returns {run name: seconds}."""
    out.mkdir(parents=True, exist_ok=True)
    db = out / "pace.duckdb"
    subprocess.run([sys.executable, "-c", ENTRY, "ingest", str(REAL), "--db", str(db), "--no-progress", "--json"],
                   cwd=REPO, check=True, capture_output=True)
    seconds = {}
    for name, args in RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            took, payload = pace(db, "loocv", *args, "--out", tmp)
        seconds[name] = round(took, 2)
        table = "loocv_predictions" if args[0] == "abs" else "loocv_pair_predictions"
        with duckdb.connect(str(db), read_only=True) as con:
            con.execute(f"COPY (SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = ?) TO '{out / name}.parquet'",
                        [payload["run_id"]])
        print(f"{name}: {took:.1f} s", flush=True)
    for method in FITS:
        took, payload = pace(db, "fit", "--method", method)
        seconds[f"fit-{method}"] = round(took, 2)
        with duckdb.connect(str(db), read_only=True) as con:
            for view in ("predictions", "pair_predictions"):
                keys, values = KEYS[view]
                con.execute(f"COPY (SELECT {', '.join(keys + values)} FROM {view} WHERE fit_id IN "
                            f"(SELECT fit_id FROM proxy_fits WHERE fit_id = ?)) "
                            f"TO '{out / f'fit-{method}-{view}'}.parquet'", [payload["fit_id"]])
        print(f"fit-{method}: {took:.1f} s", flush=True)
    (out / "seconds.json").write_text(json.dumps(seconds, indent=1))
    return seconds


def compare(before: Path, after: Path) -> float:
    worst = 0.0
    con = duckdb.connect()
    for path in sorted(before.glob("*.parquet")):
        name = path.stem
        table = next(t for t in sorted(KEYS, key=len, reverse=True) if name.endswith(t) or
                     (t.startswith("loocv") and ("pair" in t) == name.startswith("pair")))
        if name.startswith("fit-"):
            table = "pair_predictions" if name.endswith("pair_predictions") else "predictions"
        keys, values = KEYS[table]
        on = " AND ".join(f"a.{k} = b.{k}" for k in keys)
        deltas = ", ".join(f"max(abs(a.{v} - b.{v}))" for v in values)
        nulls = " + ".join(f"count(*) FILTER ((a.{v} IS NULL) <> (b.{v} IS NULL))" for v in values)
        row = con.execute(f"""SELECT count(*) FILTER (a.{keys[0]} IS NULL), count(*) FILTER (b.{keys[0]} IS NULL),
                                     {nulls}, {deltas}
                              FROM '{path}' AS a FULL JOIN '{after / path.name}' AS b ON {on}""").fetchone()
        only_after, only_before, null_mismatch, *d = row
        d = [0.0 if x is None else float(x) for x in d]
        worst = max([worst, *d])
        flag = "" if not (only_after or only_before or null_mismatch) else \
            f"  rows only before {only_before}, only after {only_after}, NULL differs {null_mismatch}"
        print(f"{name:<40} max|Δ| " + "  ".join(f"{v}={x:.3g}" for v, x in zip(values, d)) + flag)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["save", "compare"])
    parser.add_argument("dir", type=Path, help="where the saved rows are (outside the repository)")
    args = parser.parse_args()
    if not REAL.is_dir():
        sys.exit(f"needs the real scores at {REAL}")
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)
    if args.mode == "save":
        collect(args.dir)
        return
    after = args.dir.with_name(args.dir.name + "-after")
    seconds = collect(after)
    saved = json.loads((args.dir / "seconds.json").read_text())
    for name, s in seconds.items():
        print(f"{name:<28} before {saved.get(name, float('nan')):>7.1f} s  after {s:>7.1f} s")
    print(f"max |Δ| over every run and column: {compare(args.dir, after):.3g}")


if __name__ == "__main__":
    main()
