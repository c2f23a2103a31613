"""Does importing the OpenHands Index change what the source-based methods say about the Pace models?

Builds two warehouses from the real data beside the repo (never committed):
  A  ../shared/pace-results ingested, DeepSeek-V3.2-Reasoner aliased to DeepSeek-V3.2 (the README's set-up);
  B  A plus ``pace import openhands-index ../shared/openhands-index`` and the six `pace alias add` lines
     the import suggests (so 13 Pace models get index rows, 14 models arrive with agentic results only,
     commit0 gets rows and becomes a live target).
Then runs the same evaluations on both (``pace loocv abs`` for every method, ``pace loocv pair``, ``pace fit``
+ the ``predictions`` view, ``pace plan``) and prints, per run, max |Δ| over the 14 Pace models on the four
old targets, and what happened to commit0. Figures go to ``bench/results/import_invariance.json``.

    .venv/bin/python bench/import_invariance.py [--work /tmp/invariance] [--runs default,compat,...]
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# bench/ holds an ingest.py: keep the folder off sys.path so `import ingest` finds the package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))
sys.path.append(str(Path(__file__).resolve().parent))           # after the repo: bench helpers only
from workdir import claim  # noqa: E402

SHARED = REPO.parent / "shared"
OLD_TARGETS = ["gaia", "swebench", "swebench_multimodal", "swtbench"]
SUGGESTED = [("Gemini-3-Flash", "Gemini-3-Flash-Preview"), ("Gemini-3-Pro", "Gemini-3-Pro-Preview"),
             ("Qwen3-Coder-480B", "Qwen3-Coder-480B-A35B-Instruct"), ("claude-opus-4-5", "Claude-4.5-Opus"),
             ("claude-opus-4-6", "Claude-4.6-Opus"), ("claude-sonnet-4-5", "Claude-4.5-Sonnet")]
ABS_RUNS = {"default": {}, "instance": {}, "compat": {"strict_budget": True}, "mean": {}, "random-c": {},
            "bench-ridge": {}}
PAIR_RUNS = {"default": {}, "compat": {"strict_budget": True, "pin_task_a_selection": True}}


def _commit0_tree(work: Path, pace_models: set[str]) -> Path:
    """The index's commit0 results of the Pace models as a Pace-shaped CSV tree (commit0/<Model>.csv),
    so warehouse C has commit0 as a live target without any index row on the old targets."""
    names = dict(SUGGESTED) | {"DeepSeek-V3.2-Reasoner": "DeepSeek-V3.2"}
    tree = work / "commit0-tree"
    shutil.rmtree(tree, ignore_errors=True)
    (tree / "commit0").mkdir(parents=True)
    for path in sorted((SHARED / "openhands-index" / "results").glob("*/instance_results/commit0.json")):
        model = names.get(path.parent.parent.name, path.parent.parent.name)
        if model in pace_models:
            rows = json.loads(path.read_text())
            lines = ["id,score,metric_name"] + [f"{i},{'' if r['resolved'] is None else float(r['resolved'])},resolved"
                                               for i, r in rows.items()]
            (tree / "commit0" / f"{model}.csv").write_text("\n".join(lines) + "\n")
    return tree


def build(work: Path) -> tuple[Path, Path, Path, dict]:
    from warehouse import Warehouse
    from warehouse.aliases import add_alias
    from warehouse.connect import connect

    claim(work, "pace-import-invariance")         # its a/, b/, c/ and commit0-tree/ are replaced below
    a, b, c = (work / name / "pace.duckdb" for name in "abc")
    for db in (a, b, c):
        shutil.rmtree(db.parent, ignore_errors=True)
        db.parent.mkdir(parents=True)
    Warehouse(a).ingest(SHARED / "pace-results" / "standardized_results")
    con = connect(a)
    add_alias(con, "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2")
    con.close()
    for db in (b, c):
        shutil.copy(a, db)
        shutil.copytree(a.parent / "lake", db.parent / "lake")
    pace = {m for (m,) in Warehouse(a).sql("SELECT model FROM models WHERE known", output="tuples")[1]}
    Warehouse(c).ingest(_commit0_tree(work, pace))
    started = time.perf_counter()
    report = Warehouse(b).import_openhands_index(SHARED / "openhands-index")
    seconds = time.perf_counter() - started
    con = connect(b)
    for alias, model in SUGGESTED:
        add_alias(con, alias, model, yes=True)
    con.close()
    return a, b, c, {"import_s": round(seconds, 2), "anomalies": report.anomaly_counts()}


def _delta(rows_a: dict, rows_b: dict) -> tuple[float, int, list]:
    """max |Δ| over the keys of A (NaN-safe: a value missing on one side counts as a difference)."""
    worst, n, missing = 0.0, 0, []
    for key, va in rows_a.items():
        vb = rows_b.get(key)
        if vb is None:
            missing.append(key)
            continue
        for x, y in zip(va, vb):
            if x is None and y is None:
                continue
            if x is None or y is None or (math.isnan(x) != math.isnan(y)):
                missing.append(key)
                continue
            if not math.isnan(x):
                worst = max(worst, abs(x - y))
        n += 1
    return worst, n, missing


def _loocv(db: Path, task: str, method: str, opts: dict, targets):
    from warehouse import Warehouse

    wh = Warehouse(db)
    run = wh.loocv(task, method=method, targets=targets, **opts)
    if task == "abs":
        rows = wh.sql("SELECT model, target, predicted, actual FROM loocv_predictions WHERE run_id = ?",
                      [run.run_id], output="tuples")[1]
        return {(m, t): (p, y) for m, t, p, y in rows}
    rows = wh.sql("SELECT model, opponent, target, p_win FROM loocv_pair_predictions WHERE run_id = ?",
                  [run.run_id], output="tuples")[1]
    return {(m, o, t): (p,) for m, o, t, p in rows}


def _fit_predict(db: Path, targets):
    from warehouse import Warehouse

    wh = Warehouse(db)
    wh.fit(targets=targets)
    rows = wh.sql("SELECT model, target, predicted, low, high FROM predictions", output="tuples")[1]
    pairs = wh.sql("SELECT model, opponent, target, p_win FROM pair_predictions", output="tuples")[1]
    plan = wh.plan("Kimi-K2")
    # the stored proxies themselves: per target, everything but the ids and the time (data_hash: the sha256
    # of the matrices the fit saw), and every instance weight
    fits = wh.sql("""SELECT f.* EXCLUDE (fit_id, created_at, params) FROM proxy_fits f
                     WHERE f.fit_id IN (SELECT fit_id FROM current_fits) ORDER BY task, target""", output="tuples")
    weights = wh.sql("""SELECT w.* EXCLUDE (fit_id) FROM proxy_weights w
                        WHERE w.fit_id IN (SELECT fit_id FROM current_fits) ORDER BY ALL""", output="tuples")[1]
    stored = ([dict(zip(fits[0], r)) for r in fits[1]], weights)
    return ({(m, t): (p, lo, hi) for m, t, p, lo, hi in rows}, {(m, o, t): (p,) for m, o, t, p in pairs},
            sorted(plan.rows), stored)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/pace-import-invariance"))
    parser.add_argument("--runs", default="abs,pair,fit", help="abs, pair, fit (comma-separated)")
    parser.add_argument("--reuse", action="store_true", help="use the warehouses an earlier run built in --work")
    args = parser.parse_args()
    if not (SHARED / "openhands-index").is_dir() or not (SHARED / "pace-results").is_dir():
        raise SystemExit("needs ../shared/pace-results and ../shared/openhands-index beside the repo")
    if args.reuse:
        (a, b, c), built = (args.work / name / "pace.duckdb" for name in "abc"), {"reused": True}
    else:
        a, b, c, built = build(args.work)
    from warehouse import Warehouse
    pace14 = [m for (m,) in Warehouse(a).sql("SELECT model FROM models WHERE known ORDER BY model",
                                             output="tuples")[1]]
    results = {"built": built, "pace_models": pace14, "runs": [],
               "note": "A: pace-results (+ DeepSeek alias); B: A + the OpenHands Index import + the 6 suggested "
                       "aliases; C: A + the index's commit0 results of the Pace models as CSV files. Compared: "
                       "the 14 Pace models on the 4 old targets (loocv: predicted and actual; fit: predicted, "
                       "low, high; pairs: p_win between two Pace models)"}
    runs = args.runs.split(",")

    def keep(key) -> bool:
        return key[0] in pace14 and key[-1] in OLD_TARGETS and (len(key) == 2 or key[1] in pace14)

    def record(name, ra, rb):
        worst, n, missing = _delta({k: v for k, v in ra.items() if keep(k)}, rb)
        commit0 = sorted({k[0] for k in rb if k[-1] == "commit0"})
        results["runs"].append({"run": name, "max_abs_delta": worst, "compared": n,
                                "missing_in_b": [list(k) for k in missing][:10], "commit0_predicted_for": len(commit0)})
        print(f"{name:58s} max|Δ| {worst:.3g} over {n} predictions; {len(missing)} missing; commit0 predicted "
              f"for {len(commit0)} models", flush=True)

    # B vs A with --targets the 4 old ones: the import alone; B vs C with every target: the index's rows of
    # the old targets (C has commit0 as a target too, from CSV files); B vs A with every target: what commit0
    # becoming a target does to the methods that couple targets
    pairs = [("B vs A", b, a, OLD_TARGETS, "4 old targets"), ("B vs C", b, c, None, "all targets"),
             ("B vs A", b, a, None, "all targets")]
    cache: dict = {}

    def once(key, compute):
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    for label, wb, wa, targets, what in pairs:
        tkey = tuple(targets or ())
        if "abs" in runs:
            for method, opts in ABS_RUNS.items():
                ra = once((wa, "abs", method, tkey), lambda: _loocv(wa, "abs", method, opts, targets))
                rb = once((wb, "abs", method, tkey), lambda: _loocv(wb, "abs", method, opts, targets))
                record(f"{label}: loocv abs {method} ({what})", ra, rb)
        if "pair" in runs:
            for method, opts in PAIR_RUNS.items():
                ra = once((wa, "pair", method, tkey), lambda: _loocv(wa, "pair", method, opts, targets))
                rb = once((wb, "pair", method, tkey), lambda: _loocv(wb, "pair", method, opts, targets))
                record(f"{label}: loocv pair {method} ({what})", ra, rb)
        if "fit" in runs:
            fa = once((wa, "fit", tkey), lambda: _fit_predict(wa, targets))
            fb = once((wb, "fit", tkey), lambda: _fit_predict(wb, targets))
            record(f"{label}: fit + predictions ({what})", fa[0], fb[0])
            record(f"{label}: fit + pair_predictions ({what})", fa[1], fb[1])
            results["runs"].append({"run": f"{label}: plan Kimi-K2 ({what})", "same_rows": fa[2] == fb[2],
                                    "rows_a": len(fa[2]), "rows_b": len(fb[2])})
            print(f"{label}: plan Kimi-K2 ({what}): same rows {fa[2] == fb[2]} ({len(fa[2])} / {len(fb[2])})")
            old_a = [r for r in fa[3][0] if r["target"] in OLD_TARGETS]
            old_b = [r for r in fb[3][0] if r["target"] in OLD_TARGETS]
            same_fits = old_a == old_b
            same_weights = [w for w in fa[3][1] if w[1] in OLD_TARGETS] == [w for w in fb[3][1] if w[1] in OLD_TARGETS]
            results["runs"].append({"run": f"{label}: stored proxies of the old targets ({what})",
                                    "proxy_fits_identical": same_fits, "proxy_weights_identical": same_weights,
                                    "data_hashes_equal": [r["data_hash"] for r in old_a] == [r["data_hash"] for r in old_b]})
            print(f"{label}: stored proxies ({what}): proxy_fits identical {same_fits}, proxy_weights identical "
                  f"{same_weights}")
    out = REPO / "bench" / "results" / "import_invariance.json"
    if out.exists():                        # a partial rerun (--runs) replaces its own rows, keeps the others
        earlier = json.loads(out.read_text())
        mine = {r["run"] for r in results["runs"]}
        results["runs"] = [r for r in earlier.get("runs", []) if r["run"] not in mine] + results["runs"]
        if built.get("reused"):
            results["built"] = earlier.get("built", built)
    out.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"-> {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
