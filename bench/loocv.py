"""LOOCV speed: the headline compat run and the default method, through the warehouse (SQL + UDF).

Runs `pace loocv abs` as a user would (a fresh process, so the compat BLAS kernels are chosen as the
CLI chooses them) on the v2 source set of ../shared/reference (planbench mmmu visualpuzzles), and on
all sources. Writes bench/results/loocv.json with, per run, the whole process's wall and CPU
seconds, the evaluation's own seconds (recorded in loocv_runs), the machine's load average around
it, and the published pipeline's time for the same run: reference/v2/timings.txt (measured on
another machine) and timings-this-machine.txt (rerun on a machine of this kind). Plots are drawn
only on request (`--plots`); one headline run with `--plots` shows what they cost. The warehouse is
the real tree ingested with DeepSeek-V3.2-Reasoner aliased to DeepSeek-V3.2 (as bench/accuracy.py;
runs named "... (alias)"), or with ``--no-alias`` as published (the published MAE and Spearman are
reproduced only on that one). ``--runs headline`` runs only the two headline runs (with and without
plots); results of runs not run are kept from the JSON.

    .venv/bin/python bench/loocv.py [--repeat 3] [--runs headline] [--no-alias]
"""
from __future__ import annotations

import argparse
import json
import os
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
    ("compat headline (auto-tune, strict), v2, with --plots",
     ["--method", "compat", "--auto-tune", "--strict-budget", "--plots"], V2, "abs_C100_autotune"),
    ("compat frozen (strict), v2", ["--method", "compat", "--strict-budget"], V2, "abs_C100_frozen"),
    ("default (nested), v2", ["--method", "default"], V2, None),
    ("compat headline (auto-tune, strict), all sources", ["--method", "compat", "--auto-tune", "--strict-budget"],
     None, None),
    ("default (nested), all sources", ["--method", "default"], None, None),
    # The default before the new-models issue (its rows in loocv.json up to f06c694 measured this method:
    # the same MAE); bench/loocv_versions.py times it against that commit under the same load.
    ("instance (the former default), v2", ["--method", "instance"], V2, None),
    ("instance (the former default), all sources", ["--method", "instance"], None, None),
]


def published_seconds(run: str | None, timings: str = "timings.txt") -> float | None:
    path = SHARED / "reference" / "v2" / timings
    if run is None or not path.is_file():
        return None
    found = re.search(rf"^{run} rc=0 wall_s=([0-9.]+)", path.read_text(), re.M)
    return float(found.group(1)) if found else None


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and all its threads, stdout) of one run."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().strip().splitlines()[-1:]}")
        return wall, usage.ru_utime + usage.ru_stime, out.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", default="all", choices=["all", "headline"],
                        help="all runs, or only the compat headline (with and without --plots)")
    parser.add_argument("--no-alias", action="store_true",
                        help="the tree as published (DeepSeek-V3.2-Reasoner its own model, as in ../shared/reference: "
                             "the published MAE/Spearman are reproduced on it); runs are named without ' (alias)'")
    args = parser.parse_args()
    suffix = "" if args.no_alias else " (alias)"
    warehouse = ("real tree, no alias (as published)" if args.no_alias
                 else "real tree, DeepSeek-V3.2-Reasoner aliased to DeepSeek-V3.2")
    runs = [r for r in RUNS if args.runs == "all" or r[0].startswith("compat headline") and "v2" in r[0]]
    if not REAL.is_dir():
        sys.exit(f"needs the real scores at {REAL}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "pace.duckdb")
        subprocess.run([PACE, "ingest", str(REAL), "--db", db, "--no-progress", "--json"], check=True,
                       capture_output=True)
        if not args.no_alias:
            subprocess.run([PACE, "alias", "add", "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2", "--db", db], check=True,
                           capture_output=True)
        for name, flags, sources, ref in runs:
            walls, cpus, kernels, loads = [], [], [], []
            for _ in range(args.repeat):
                budget = ["--B", "300"] if "compat" in flags else []      # the default method reads no --B
                cmd = [PACE, "loocv", "abs", *flags, "--count", "100", *budget, "--seed", "42", "--db", db,
                       "--out", str(Path(tmp) / "out"), "--json"] + (["--sources", sources] if sources else [])
                load = os.getloadavg()[0]
                wall, cpu, stdout = timed(cmd)
                walls.append(wall)
                cpus.append(cpu)
                loads.append((round(load, 2), round(os.getloadavg()[0], 2)))
                payload = json.loads(stdout)
                kernels.append(payload["seconds"])
            best = walls.index(min(walls))
            avg = {m["target"]: m for m in payload["metrics"]}["AVERAGE"]
            row = {"run": name + suffix, "warehouse": warehouse,
                   "wall_s_best": round(walls[best], 2), "wall_s_all": [round(w, 2) for w in walls],
                   "cpu_s_of_best": round(cpus[best], 2), "in_warehouse_s_of_best": round(kernels[best], 2),
                   "outside_evaluation_s_of_best": round(walls[best] - kernels[best], 2),
                   "load_1min_before_after": loads, "published_s": published_seconds(ref),
                   "published_s_this_machine": published_seconds(ref, "timings-this-machine.txt"),
                   "avg_mae_pp": round(avg["mae_pp"], 3), "avg_spearman": round(avg["spearman"], 3)}
            for key, name in (("published_s", "speedup_vs_published"),
                              ("published_s_this_machine", "speedup_vs_published_this_machine")):
                if row[key]:
                    row[name] = round(row[key] / row["wall_s_best"], 1)
            print(json.dumps(row))
            results.append(row)
    out = REPO / "bench" / "results" / "loocv.json"
    if args.runs != "all" and out.exists():         # keep the runs not run this time, in RUNS order
        fresh = {r["run"]: r for r in results}
        old = {r["run"]: r for r in json.loads(out.read_text()).get("results", [])}
        names = [name + s for name, *_ in RUNS for s in ("", " (alias)")]
        results = [fresh.get(name) or old[name] for name in names if name in fresh or name in old]
    out.write_text(json.dumps({"machine": f"{platform.machine()}, {os.cpu_count()} cores",
                               "repeat": args.repeat,
                               "note": "wall: the whole `pace loocv abs` process (start-up, evaluation, results; "
                                       "plots only in the --plots run); in_warehouse: the evaluation alone; the "
                                       "machine is shared: see load_1min_before_after. The same run differs by "
                                       "10-20 % from one day to another on this machine: compare commits with "
                                       "bench/loocv_versions.py (alternated runs, bench/results/"
                                       "loocv_versions.json), not with an earlier version of this file",
                               "results": results}, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
