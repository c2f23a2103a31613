"""Goal A accuracy of every method and baseline under every split, through the warehouse itself.

For each data variant, method and split, `run_abs` (the path `pace loocv abs --split` takes) produces the
held-out predictions; the figures come from the warehouse's own views:

  MAE (pp), Spearman     loocv_metrics (per target; AVERAGE = unweighted mean over the 4 targets)
  pair accuracy (%)      loocv_abs_pair_metrics (held-out model against every other model)
  interval coverage (%)  share of held-out truths inside the interval the method's stored fit would give
                         (warehouse.fit.held_out_coverage, shared with `pace report`):
                         offsets = split-conformal quantiles (warehouse.fit.interval_offsets, 80 %) of the
                         method's LOO residuals of the *other* models (jackknife: a model's own residual
                         never sets its interval); for `default`, on the logit scale, and for a model
                         whose source ability lies outside its fold's training models' range (the view
                         source_ability), of the LOO and extrapolation-split residuals pooled, as `pace fit`
                         stores them (oor_lo / oor_hi).

Splits: loo, family (model_family), low-3 / high-3 (the 3 models with the lowest / highest source ability
held out together). Methods: default, instance, compat (strict budget with the published frozen
configurations; those were themselves chosen on these 14 models, so compat is optimistic; its auto-tune,
which scores configurations on the evaluation predictions themselves, is not run here), and the
baselines mean, random-c, bench-ridge.

Data variants (real data, `../shared`, DeepSeek-V3.2-Reasoner aliased to DeepSeek-V3.2, the unlabelled
older models ingested too so the default method's ability scale can use them):
  first  duplicates as published (gpqa's broken first run kept)
  last   `--duplicates last` (gpqa's real second run)

Synthetic stress case: `ingest/synthetic.py` with a weak tail (4 of 18 models with their general ability
shifted 1.5 sd below every other model); split low-4 holds exactly the tail out; MAE against the *true*
expected target means the generator reports. Seeds 0, 1, 2.

    .venv/bin/python bench/accuracy.py [--quick] [--variants first,last] [--no-synthetic]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from ingest.load import ingest_tree  # noqa: E402
from warehouse.methods import REGISTRY  # noqa: E402
from warehouse.aliases import add_alias  # noqa: E402
from warehouse.connect import connect  # noqa: E402
from warehouse.evaluate import EvalRequest, run_abs  # noqa: E402
from warehouse.fit import held_out_coverage, out_of_range_models  # noqa: E402

SHARED = REPO.parent / "shared"
REAL = SHARED / "pace-results" / "standardized_results"
UNLABELLED = SHARED / "unlabelled-sources" / "standardized_results"
METHODS = ["default", "instance", "compat", "mean", "random-c", "bench-ridge"]
SPLITS = ["loo", "family", "low-3", "high-3"]
LEVEL = 0.8


def _request(method: str, split: str) -> EvalRequest:
    if method == "compat":       # its shipped (frozen) configurations: auto-tune would tune on the held-out models
        return EvalRequest(method="compat", strict_budget=True, split=split)
    return EvalRequest(method=method, split=split)


def _predictions(con, run_id):
    """{(model, target): (predicted, actual)} of a run."""
    return {(m, t): (p, a) for m, t, p, a in con.execute(
        "SELECT model, target, predicted, actual FROM loocv_predictions WHERE run_id = ? "
        "AND predicted IS NOT NULL AND actual IS NOT NULL", [run_id]).fetchall()}


def evaluate_variant(con, methods, splits) -> dict:
    result = {}
    for method in methods:
        runs, entry = {}, {}
        for split in splits:
            started = time.perf_counter()
            run_id = run_abs(con, _request(method, split))
            runs[split] = run_id
            metrics = {t: {"mae_pp": 100 * mae, "spearman": sp, "n": n}
                       for t, mae, sp, n in con.execute(
                           "SELECT target, mae, spearman, n_models FROM loocv_metrics WHERE run_id = ?",
                           [run_id]).fetchall()}
            for t, acc in con.execute("SELECT target, accuracy FROM loocv_abs_pair_metrics WHERE run_id = ?",
                                      [run_id]).fetchall():
                metrics.setdefault(t, {})["pair_accuracy_pct"] = 100 * acc
            entry[split] = {"metrics": metrics, "seconds": round(time.perf_counter() - started, 1), "run_id": run_id}
            avg = metrics.get("AVERAGE", {})
            print(f"  {method:12s} {split:7s} MAE {avg.get('mae_pp', float('nan')):6.2f}  "
                  f"Sp {avg.get('spearman', float('nan')):6.3f}  pair {avg.get('pair_accuracy_pct', float('nan')):5.1f}"
                  f"  ({entry[split]['seconds']} s)", flush=True)
        loo = _predictions(con, runs["loo"]) if "loo" in runs else {}
        ext = {}
        for split in splits:
            if split != "loo":
                for key, v in _predictions(con, runs[split]).items():
                    ext.setdefault(key, v)
        for split in splits:
            preds = _predictions(con, runs[split])
            cov = held_out_coverage(preds, loo, ext, out_of_range_models(con, runs[split]), LEVEL,
                                    logit_scale=method in REGISTRY and REGISTRY[method].logit_intervals)
            entry[split]["interval_coverage_pct"] = {t: 100 * v for t, v in cov.items()}
        result[method] = entry
    return result


def real_warehouse(tmp: Path, duplicates: str):
    con = connect(tmp / f"real-{duplicates}.duckdb", create=True)
    ingest_tree(con, REAL, tmp / f"lake-{duplicates}", duplicates=duplicates)
    add_alias(con, "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2")
    if UNLABELLED.is_dir():
        ingest_tree(con, UNLABELLED, tmp / f"lake-{duplicates}", duplicates=duplicates)
    return con


def synthetic_stress(tmp: Path, seed: int, methods) -> dict:
    from ingest.synthetic import generate_tree

    tail = 4
    summary = generate_tree(tmp / f"synth-{seed}", n_models=18, seed=seed, weak_tail=tail, weak_shift=1.5)
    con = connect(tmp / f"synth-{seed}.duckdb", create=True)
    ingest_tree(con, tmp / f"synth-{seed}", tmp / f"synth-lake-{seed}")
    tail_models = set(summary.models[-tail:])
    out = {"tail": sorted(tail_models)}
    held = {m for _, m in con.execute("SELECT fold, model FROM split_folds('low-4')").fetchall()}
    out["low4_is_tail"] = held == tail_models
    for method in methods:
        row = {}
        for split in ("loo", "low-4"):
            run_id = run_abs(con, _request(method, split))
            preds = _predictions(con, run_id)
            if split == "loo":   # the 14 in-range models, against their observed means
                errs = [abs(p - a) for (m, _), (p, a) in preds.items() if m not in tail_models]
                row["loo_mae_pp"] = 100 * float(np.mean(errs))
            else:                # the weak tail, against the generator's true expected means
                errs = [abs(p - summary.expected_target_means[t][m]) for (m, t), (p, _) in preds.items()]
                bias = [p - summary.expected_target_means[t][m] for (m, t), (p, _) in preds.items()]
                row["tail_mae_pp"] = 100 * float(np.mean(errs))
                row["tail_bias_pp"] = 100 * float(np.mean(bias))
        out[method] = row
        print(f"  synthetic seed {seed} {method:12s} LOO MAE {row['loo_mae_pp']:6.2f}  weak tail MAE "
              f"{row['tail_mae_pp']:6.2f} (bias {row['tail_bias_pp']:+.2f})", flush=True)
    con.close()
    return out


def markdown(results: dict, variant: str = "first") -> str:
    """The README table: per method and split, MAE (pp) / Spearman / pair accuracy (%) / interval coverage (%)."""
    real = results["real"].get(variant, {})
    lines = ["| method | " + " | ".join(SPLITS) + " |", "|---" * (len(SPLITS) + 1) + "|"]
    for method, entry in real.items():
        cells = []
        for split in SPLITS:
            e = entry.get(split)
            if not e:
                cells.append("")
                continue
            a = e["metrics"].get("AVERAGE", {})
            cells.append(f"{a.get('mae_pp', float('nan')):.2f} / {a.get('spearman', float('nan')):.2f} / "
                         f"{a.get('pair_accuracy_pct', float('nan')):.1f} / "
                         f"{e['interval_coverage_pct']['AVERAGE']:.0f}")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def per_target(results: dict, method: str = "default", variant: str = "first") -> str:
    entry = results["real"][variant][method]
    targets = sorted(t for t in entry["loo"]["metrics"] if t != "AVERAGE")
    lines = ["| split | " + " | ".join(targets) + " |", "|---" * (len(targets) + 1) + "|"]
    for split in SPLITS:
        m = entry[split]["metrics"]
        lines.append(f"| {split} | " + " | ".join(
            f"{m[t]['mae_pp']:.2f} / {m[t]['spearman']:.2f}" if t in m else "" for t in targets) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", action="store_true", help="print the README tables from accuracy.json and stop")
    ap.add_argument("--quick", action="store_true", help="default, instance and mean only")
    ap.add_argument("--variants", default="first,last")
    ap.add_argument("--no-synthetic", action="store_true")
    args = ap.parse_args()
    if args.table:
        saved = json.loads((REPO / "bench" / "results" / "accuracy.json").read_text())
        for variant in saved["real"]:
            print(f"duplicates={variant}\n" + markdown(saved, variant) + "\n\n" + per_target(saved, variant=variant) + "\n")
        for seed, row in saved["synthetic"].items():
            print(f"synthetic seed {seed}: " + ", ".join(
                f"{m} {v['loo_mae_pp']:.2f} / tail {v['tail_mae_pp']:.2f}" for m, v in row.items() if isinstance(v, dict)))
        return
    methods = ["default", "instance", "mean"] if args.quick else METHODS
    results = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                           "jobs": os.environ.get("PACE_JOBS")},
               "level": LEVEL, "count": 100, "real": {}, "synthetic": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if REAL.is_dir():
            for variant in args.variants.split(","):
                print(f"real data, duplicates={variant}", flush=True)
                con = real_warehouse(tmp, variant)
                results["real"][variant] = evaluate_variant(con, methods, SPLITS)
                con.close()
        else:
            print(f"real data absent ({REAL}); only the synthetic stress case runs")
        if not args.no_synthetic:
            for seed in (0, 1, 2):
                results["synthetic"][str(seed)] = synthetic_stress(tmp, seed, [m for m in methods if m != "compat"])
    out = REPO / "bench" / "results" / "accuracy.json"
    saved = json.loads(out.read_text()) if out.is_file() else {}
    saved.update(results)            # other scripts' sections (bench/anchors.py: anchors, anchors_range) stay
    out.write_text(json.dumps(saved, indent=1, default=float))
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
