"""LOOCV speed: the headline compat run and the default method, through the warehouse (SQL + UDF).

Runs `pace loocv abs` as a user would (a fresh process, so the compat BLAS kernels are chosen as the
CLI chooses them) on the v2 source set of ../shared/reference (planbench mmmu visualpuzzles), and on
all sources. Writes bench/results/loocv.json with wall seconds, the kernel seconds recorded in
loocv_runs, and the published pipeline's time for the same run (reference timings.txt).

    .venv/bin/python bench/loocv.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL = SHARED / "pace-results" / "standardized_results"
PACE = str(Path(sys.executable).parent / "pace")
V2 = "planbench,mmmu,visualpuzzles"

RUNS = [
    ("compat headline (auto-tune, strict), v2", ["--method", "compat", "--auto-tune", "--strict-budget"], V2,
     "abs_C100_autotune"),
    ("compat frozen (strict), v2", ["--method", "compat", "--strict-budget"], V2, "abs_C100_frozen"),
    ("default (nested), v2", ["--method", "default"], V2, None),
    ("compat headline (auto-tune, strict), all sources", ["--method", "compat", "--auto-tune", "--strict-budget"],
     None, None),
    ("default (nested), all sources", ["--method", "default"], None, None),
]


def published_seconds(run: str | None) -> float | None:
    if run is None:
        return None
    text = (SHARED / "reference" / "v2" / "timings.txt").read_text()
    found = re.search(rf"^{run} rc=0 wall_s=([0-9.]+)", text, re.M)
    return float(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not REAL.is_dir():
        sys.exit(f"needs the real scores at {REAL}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "pace.duckdb")
        subprocess.run([PACE, "ingest", str(REAL), "--db", db, "--no-progress", "--json"], check=True,
                       capture_output=True)
        for name, flags, sources, ref in RUNS:
            walls, kernels = [], []
            for _ in range(args.repeat):
                cmd = [PACE, "loocv", "abs", *flags, "--count", "100", "--B", "300", "--seed", "42", "--db", db,
                       "--out", str(Path(tmp) / "out"), "--json"] + (["--sources", sources] if sources else [])
                started = time.perf_counter()
                out = subprocess.run(cmd, check=True, capture_output=True, text=True)
                walls.append(time.perf_counter() - started)
                payload = json.loads(out.stdout)
                kernels.append(payload["seconds"])
            avg = {m["target"]: m for m in payload["metrics"]}["AVERAGE"]
            row = {"run": name, "wall_s_best": round(min(walls), 2), "wall_s_all": [round(w, 2) for w in walls],
                   "in_warehouse_s_best": round(min(kernels), 2), "published_s": published_seconds(ref),
                   "avg_mae_pp": round(avg["mae_pp"], 3), "avg_spearman": round(avg["spearman"], 3)}
            if row["published_s"]:
                row["speedup_vs_published"] = round(row["published_s"] / row["wall_s_best"], 1)
            print(json.dumps(row))
            results.append(row)
    out = REPO / "bench" / "results" / "loocv.json"
    out.write_text(json.dumps({"machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                               "repeat": args.repeat, "results": results}, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
