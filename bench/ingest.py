"""Ingest speed: our loader vs a naive per-file pandas loader, on the real tree and a 10x synthetic one.

Writes bench/results/ingest.json. Each loader starts from an empty database and does the same job:
parse every file, keep the first of duplicate ids, turn bad scores into NULL, load one DuckDB table.
(Ours also writes the Parquet lake, hashes files for idempotence and computes the anomaly report.)

    .venv/bin/python bench/ingest.py [--repeat 3] [--scale 10]
"""
from __future__ import annotations

import sys
from pathlib import Path

# This file is called ingest.py: keep its folder off sys.path so `import ingest` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json
import platform
import shutil
import tempfile
import time

import duckdb
import pandas as pd

from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from ingest.tree import discover
from warehouse.connect import connect

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "pace-results" / "standardized_results"


def ours(tree: Path, work: Path) -> tuple[float, int]:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    con = connect(work / "pace.duckdb")
    started = time.perf_counter()
    report = ingest_tree(con, tree, work / "lake")
    elapsed = time.perf_counter() - started
    con.close()
    return elapsed, report.rows_written


def naive_pandas(tree: Path, work: Path) -> tuple[float, int]:
    """What one writes first: a loop of pd.read_csv, concat, then hand the frame to DuckDB."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.perf_counter()
    frames = []
    for sf in discover(tree):
        df = pd.read_csv(sf.path, dtype=str, keep_default_na=False)
        df = df.drop_duplicates(subset="id", keep="first")
        df["score"] = pd.to_numeric(df["score"], errors="coerce")
        df["model"], df["benchmark"], df["subdir"] = sf.file_model, sf.benchmark, sf.subdir
        frames.append(df)
    allrows = pd.concat(frames, ignore_index=True)
    con = duckdb.connect(str(work / "naive.duckdb"))
    con.execute("CREATE TABLE scores AS SELECT model, benchmark, subdir, id AS instance_id, score, metric_name "
                "FROM allrows")
    con.close()
    return time.perf_counter() - started, len(allrows)


def measure(name: str, tree: Path, repeat: int, tmp: Path) -> dict:
    best_ours, best_naive, rows = float("inf"), float("inf"), 0
    for _ in range(repeat):
        t, rows = ours(tree, tmp / "ours")
        best_ours = min(best_ours, t)
        t, naive_rows = naive_pandas(tree, tmp / "naive")
        best_naive = min(best_naive, t)
        assert naive_rows == rows, (naive_rows, rows)
    result = {
        "tree": name, "files": len(discover(tree)), "rows": rows,
        "ours_s": round(best_ours, 4), "pandas_s": round(best_naive, 4),
        "speedup_vs_pandas": round(best_naive / best_ours, 2),
        "ours_rows_per_s": round(rows / best_ours), "pandas_rows_per_s": round(rows / best_naive),
    }
    print(json.dumps(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--scale", type=float, default=10.0, help="synthetic tree size vs the real one")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        if REAL.is_dir():
            results.append(measure("real (../shared/pace-results)", REAL, args.repeat, tmp))
        else:
            print(f"skipping the real tree: {REAL} not found")
        synth = tmp / "synthetic"
        generate_tree(synth, n_models=14, seed=0, scale=args.scale)
        results.append(measure(f"synthetic x{args.scale:g}", synth, args.repeat, tmp))
    out = REPO / "bench" / "results" / "ingest.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                               "repeat": args.repeat, "results": results}, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
