"""The anchors issue's done-when walkthrough, on the real data, with the `pace` command line a user types.

Two models of the OpenHands Index are held out of the fit: only their `metadata.json` is imported (how a new
model arrives). Then, per held-out model M:

    pace plan M --anchors K --json          the K instances per target that most narrow M's intervals
    (run them: here, read from M's own instance files, the "withheld model's own file")
    pace import openhands-index BATCH       M's results on exactly those instances
    pace predict M --json                   all five targets with intervals

in rounds of --batch anchors per target until K (adaptive: each plan sees the previous round's results).
Reported per model and target: the truth (M's full mean over its own instance file), the prediction from
metadata alone (0 anchors) and after K anchors with the 80 % interval, and the anchors' cost (USD, from M's
own per-instance costs). Writes bench/results/anchors_walkthrough.json.

    .venv/bin/python bench/anchors_walkthrough.py [--models GPT-5.4,Qwen3-Coder-Next] [--anchors 30]
        [--batch 10] [--work DIR] [--keep]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

sys.path.append(str(Path(__file__).resolve().parent))           # after the repo: bench helpers only
from ingest.openhands_index import BENCHMARKS, KNOWN_SPELLINGS  # noqa: E402
from workdir import claim  # noqa: E402

SHARED = REPO.parent / "shared"
#: folders shown by a portable name in the log that goes into bench/results (no machine paths there)
SHOWN_AS: dict[Path, str] = {SHARED: "../shared"}
PACE = Path(sys.executable).parent / "pace"
INDEX_NAMES = {bench: name for name, bench in BENCHMARKS.items()}     # warehouse name -> index file stem


def pace(*args, db: Path, log: list) -> dict | str:
    """Run `pace ARGS --db DB`; the parsed JSON when --json was given."""
    command = [str(PACE), *map(str, args), "--db", str(db)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    shown = " ".join(["pace", *map(portable, args)])
    log.append({"command": shown, "seconds": round(seconds, 1), "exit": done.returncode})
    print(f"$ {shown}   ({seconds:.1f} s, exit {done.returncode})", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"failed: {shown}\n{done.stderr}")
    return json.loads(done.stdout) if "--json" in args else done.stdout


def portable(arg) -> str:
    """``arg`` as the log shows it: a path under a folder of ``SHOWN_AS`` by that folder's portable name."""
    for folder, name in SHOWN_AS.items():
        if isinstance(arg, Path) and arg.is_relative_to(folder):
            return str(Path(name) / arg.relative_to(folder))
    return str(arg)


def own_results(model: str) -> dict[str, dict]:
    """{warehouse benchmark: {instance_id: {"resolved", "cost"}}} of the model's own instance files."""
    folder = SHARED / "openhands-index" / "results" / model / "instance_results"
    return {bench: json.loads((folder / f"{name}.json").read_text())
            for bench, name in INDEX_NAMES.items() if (folder / f"{name}.json").is_file()}


def fmt(d: dict) -> str:
    return "-" if d["predicted"] is None else f"{d['predicted']:.1f} [{d['low']:.1f}-{d['high']:.1f}]"


def write_batch(folder: Path, model: str, chosen: dict[str, set], own: dict[str, dict]) -> None:
    """An index folder with the model's metadata and its results on the ``chosen`` instances only."""
    target = folder / "results" / model
    (target / "instance_results").mkdir(parents=True, exist_ok=True)
    shutil.copy(SHARED / "openhands-index" / "results" / model / "metadata.json", target / "metadata.json")
    for bench, ids in chosen.items():
        rows = {i: own[bench][i] for i in sorted(ids) if i in own[bench]}
        (target / "instance_results" / f"{INDEX_NAMES[bench]}.json").write_text(json.dumps(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="GPT-5.4,Qwen3-Coder-Next")
    ap.add_argument("--anchors", type=int, default=30)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "anchors_walkthrough.json")
    args = ap.parse_args()
    if not (SHARED / "openhands-index").is_dir():
        raise SystemExit(f"no {SHARED / 'openhands-index'}: the walkthrough needs the real data")
    held = [m.strip() for m in args.models.split(",") if m.strip()]
    work = claim(args.work or Path(tempfile.mkdtemp(prefix="pace-anchors-walk-")), "pace-anchors-walkthrough")
    SHOWN_AS[work] = "WORK"
    db, log = work / "pace.duckdb", []
    index = work / "index"
    for earlier in (db, db.with_name(db.name + ".wal")):     # an earlier run's warehouse: built again
        earlier.unlink(missing_ok=True)
    for earlier in [index, work / "pace.lake", work / "lake", *work.glob("batch-*")]:
        shutil.rmtree(earlier, ignore_errors=True)
    shutil.copytree(SHARED / "openhands-index", index)       # a copy: the held-out models are cut from it
    known = {folder.name for folder in (index / "results").iterdir() if folder.is_dir()}
    unknown = [m for m in held if m not in known]           # also keeps a name like ../x from leaving the copy
    if unknown:
        raise SystemExit(f"--models: not a model folder of the index: {', '.join(unknown)}")
    for model in held:                      # only metadata.json: the model arrives knowing nothing else
        for extra in ("scores.json", "instance_results"):
            path = index / "results" / model / extra
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    started = time.perf_counter()
    pace("ingest", SHARED / "pace-results" / "standardized_results", db=db, log=log)
    for alias, name in KNOWN_SPELLINGS.items():      # the README's spellings, applied as a user would
        pace("alias", "add", alias, name, "--yes", db=db, log=log)
    pace("import", "openhands-index", index, db=db, log=log)
    fit = pace("fit", "--task", "abs", "--json", db=db, log=log)
    report = {"models": {}, "commands": log, "anchors": args.anchors, "batch": args.batch,
              "fit_anchors": fit.get("anchors")}
    for model in held:
        own = own_results(model)
        truth = {b: sum(bool(v.get("resolved")) for v in rows.values()) / len(rows) for b, rows in own.items() if rows}
        before = {p["target"]: p for p in pace("predict", model, "--json", db=db, log=log)["predictions"]}
        chosen: dict[str, set] = {b: set() for b in own}
        batch_dir = work / f"batch-{model}"
        while max(len(v) for v in chosen.values()) < args.anchors:
            step = min(args.batch, args.anchors - max(len(v) for v in chosen.values()))
            plan = pace("plan", model, "--anchors", step, "--json", db=db, log=log)
            new = [r for r in plan["rows"] if r.get("kind") == "anchor"]
            if not new:
                break
            for r in new:
                chosen.setdefault(r["benchmark"], set()).add(r["instance_id"])
            write_batch(batch_dir, model, chosen, own)
            pace("import", "openhands-index", batch_dir, db=db, log=log)
        after = {p["target"]: p for p in pace("predict", model, "--json", db=db, log=log)["predictions"]}
        cost = {b: sum(own[b][i].get("cost") or 0.0 for i in ids if i in own[b]) for b, ids in chosen.items()}
        full_cost = {b: sum(v.get("cost") or 0.0 for v in rows.values()) for b, rows in own.items()}
        rows = {}
        for target in sorted(set(before) | set(after)):
            b, a = before.get(target, {}), after.get(target, {})
            rows[target] = {
                "truth_pct": 100 * truth[target] if target in truth else None,
                "metadata_only": {k: (100 * b[k] if b.get(k) is not None else None) for k in ("predicted", "low", "high")},
                "after_anchors": {k: (100 * a[k] if a.get(k) is not None else None) for k in ("predicted", "low", "high")},
                "anchors": a.get("anchors"), "prior": a.get("prior"), "method": a.get("method"),
                "cost_usd": round(cost.get(target, 0.0), 2), "full_cost_usd": round(full_cost.get(target, 0.0), 2)}
        report["models"][model] = rows
        print(f"\n{model}: target, truth, metadata only [interval], after anchors [interval], anchors, cost/full USD")
        for target, r in rows.items():
            m, a = r["metadata_only"], r["after_anchors"]
            truth_s = "-" if r["truth_pct"] is None else f"{r['truth_pct']:.1f}"
            print(f"  {target:<20} {truth_s:>6}  {fmt(m):<20} {fmt(a):<20} {r['anchors']!s:>3}  "
                  f"{r['cost_usd']:.2f}/{r['full_cost_usd']:.2f}")
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"-> {args.out} ({report['seconds']} s)")
    if not args.keep and args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
