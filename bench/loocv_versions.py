"""LOOCV and fit speed of this tree against an older commit, alternated run by run under the same load.

bench/loocv.py times this tree alone; when a method was renamed or a refactor is in question, its
figures from another day (another load) do not say which code is faster. This bench checks out the
older commit into a temporary git worktree, ingests the real tree once per version (each with its
own schema), and then runs `pace loocv abs` of the old and the new version one after the other,
``--repeat`` times, so both see the same machine. Each comparison names the method on each side
(a method may have been renamed: the default of 53c67c5 is `--method instance` today):

    .venv/bin/python bench/loocv_versions.py --compare 53c67c5:default:instance \\
        --compare f06c694:default:default --compare "f06c694:compat:compat:--strict-budget --B 300" --repeat 3

A fourth field holds further flags for both sides (space-separated). ``--command`` chooses what is timed
(repeatable): ``loocv abs`` (default), ``loocv pair`` or ``fit`` (`pace fit`, intervals included; its MAE
column is the average of the fit's held-out MAE per target).

Writes bench/results/loocv_versions.json: per comparison and source set, both sides' process wall
and in-evaluation seconds (best and all), their average MAE (equal MAE = the same method), and the
load around each run. Needs the real scores at ../shared/pace-results (exits saying so otherwise).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "pace-results" / "standardized_results"
OUT = REPO / "bench" / "results" / "loocv_versions.json"
SOURCES = {"v2": "planbench,mmmu,visualpuzzles", "all": None}
ENTRY = "import sys; sys.argv = ['pace'] + sys.argv[1:]; from warehouse.entry import main; main()"


def pace(*args: str) -> list[str]:
    """The command line of `pace ARGS` with this interpreter's packages; the code comes from the folder
    it runs in: run it with ``cwd=SRC`` and ``PYTHONPATH=SRC`` (``python -c`` puts the working folder
    first on the path, before PYTHONPATH)."""
    return [sys.executable, "-c", ENTRY, *args]


def run_once(src: Path, db: Path, command: str, method: str, flags: list[str], sources: str | None,
             out: Path) -> dict:
    where = ["--out", str(out)] if command != "fit" else []
    cmd = pace(*command.split(), "--method", method, *flags, "--count", "100", "--seed", "42", "--db", str(db),
               *where, "--json") + (["--sources", sources] if sources else [])
    env = {**os.environ, "PYTHONPATH": str(src)}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"{src.name}: pace {command} --method {method} failed: {done.stderr.strip().splitlines()[-1:]}")
    # older commits let DuckDB's progress bar reach stdout before the JSON
    payload = json.loads(done.stdout[done.stdout.find("{"):])
    if command == "fit":
        maes = [v for v in payload["loocv_mae"].values() if v is not None]
        score = 100 * sum(maes) / max(len(maes), 1)
    else:
        avg = {m["target"]: m for m in payload["metrics"]}["AVERAGE"]
        score = avg["mae_pp"] if "mae_pp" in avg else avg["accuracy_pct"]
    return {"wall_s": round(wall, 2), "in_evaluation_s": round(payload["seconds"], 2),
            "avg_mae_pp": round(score, 4), "load_1min_before_after": [round(load, 2),
                                                                             round(os.getloadavg()[0], 2)]}


def ingest(src: Path, db: Path) -> Path:
    """The real tree ingested into ``db`` by the code of ``src``."""
    subprocess.run(pace("ingest", str(REAL), "--db", str(db), "--no-progress", "--json"),
                   env={**os.environ, "PYTHONPATH": str(src)}, cwd=src, check=True, capture_output=True)
    return db


def summary(runs: list[dict]) -> dict:
    best = min(runs, key=lambda r: r["wall_s"])
    return {"wall_s_best": best["wall_s"], "in_evaluation_s_of_best": best["in_evaluation_s"],
            "wall_s_all": [r["wall_s"] for r in runs], "avg_mae_pp": best["avg_mae_pp"],
            "load_1min_before_after": [r["load_1min_before_after"] for r in runs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="append", required=True, metavar="REV:OLD_METHOD:NEW_METHOD[:FLAGS]",
                        help="an older commit, the method to run on it and on this tree, and further flags for "
                             "both (repeatable)")
    parser.add_argument("--sources", default="v2,all", help="source sets: v2 (planbench,mmmu,visualpuzzles), all")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--command", action="append", choices=["loocv abs", "loocv pair", "fit"],
                        help="what to time (repeatable; default: loocv abs)")
    parser.add_argument("--out", type=Path, default=OUT, help="results file (default bench/results/loocv_versions.json)")
    args = parser.parse_args()
    compares = []
    for spec in args.compare:
        parts = spec.split(":", 3)
        if len(parts) not in (3, 4) or not all(parts[:3]):
            parser.error(f"--compare {spec!r}: expected REV:OLD_METHOD:NEW_METHOD[:FLAGS], e.g. "
                         "53c67c5:default:instance")
        compares.append((*parts[:3], parts[3].split() if len(parts) == 4 else []))
    sets = [s for s in args.sources.split(",") if s]
    unknown = [s for s in sets if s not in SOURCES]
    if unknown:
        parser.error(f"--sources {','.join(unknown)}: known source sets are {', '.join(SOURCES)}")
    if not REAL.is_dir():
        sys.exit(f"needs the real scores at {REAL}")
    results = []
    with tempfile.TemporaryDirectory(prefix="pace-versions-") as tmp:
        work = Path(tmp)
        trees: dict[str, tuple[Path, Path]] = {}      # one worktree and one warehouse per commit
        try:
            new_db = ingest(REPO, work / "new.duckdb")
            for rev, old_method, new_method, flags in compares:
                if rev not in trees:
                    tree = work / f"tree-{rev}"
                    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), rev],
                                   check=True)
                    trees[rev] = (tree, ingest(tree, work / f"{rev}.duckdb"))
                tree, old_db = trees[rev]
                for command in args.command or ["loocv abs"]:
                    for name in sets:
                        old_runs, new_runs = [], []
                        for _ in range(args.repeat):
                            old_runs.append(run_once(tree, old_db, command, old_method, flags, SOURCES[name],
                                                     work / "out-old"))
                            new_runs.append(run_once(REPO, new_db, command, new_method, flags, SOURCES[name],
                                                     work / "out-new"))
                        row = {"command": command, "old": {"commit": rev, "method": old_method, **summary(old_runs)},
                               "new": {"commit": "this tree", "method": new_method, **summary(new_runs)},
                               "flags": " ".join(flags), "sources": name}
                        row["new_over_old_wall"] = round(row["new"]["wall_s_best"] / row["old"]["wall_s_best"], 3)
                        print(json.dumps(row), flush=True)
                        results.append(row)
        finally:
            for tree, _ in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    args.out.write_text(json.dumps({"machine": f"{platform.machine()}, {os.cpu_count()} cores", "this_tree": head,
                               "repeat": args.repeat, "results": results}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
