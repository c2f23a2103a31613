"""Issue 23, item 5: does the out-of-range check catch the models it should, and do the intervals then tell
the truth? Measured on the 14 Pace models under the warehouse's own splits, and on the six older unlabelled
models (GPT-4o, ...) under the fit on all 14.

Detectors, each judging a held-out model against its fold's training models (labelled) only, per target:
  ability      the check `pace fit` stored before item 5: the model's ability on the fold's own source-ability
               scale (the default method's, as `predictions` computes it) outside the fold's training models'
               [min, max] on that target
  robust       the same ability outside the training models' second-lowest .. second-highest
               (models.default.shrinkage.robust_range: proxy_fits.range_lo / range_hi)
  leaves       models.anchors.range: the share of the model's source benchmarks voting outside the training
               models' robust per-leaf range (second smallest / largest; a benchmark votes when most of its leaves
               lie outside) >= SHARE
  era          models.anchors.range.era_side: release date (OpenHands Index metadata) outside the training
               models' dates (unknown for Kimi-K2 and the six older models)
  ability+era  the product's rule (fit_predictions.range_side): the robust side, else the era side
  source-ability, source-ability+era  the detectors section 6 of bench/results/anchors_experiments.md first
               measured: the view source_ability (sql/029, one step of an additive leaf + model fit over every
               model, not the fit's scale) outside the training models' [min, max], and that or the era side
Intervals: today's (bench/anchors_sources.source_interval: what `pace fit` stores, pooled with extrapolation
residuals outside the fold's [min, max] ability), and, per detector, that interval with the bound on the
flagged side moved to the floor reading (1 %) / the ceiling (100 %) (models.anchors.range.widen_to_bounds), as
fit_predictions does. bench/anchors_range_check.py checks that `pace fit` + `predictions` flag the loo
split's models as the `ability+era` detector does.

    .venv/bin/python bench/anchors_range.py     (writes the 'anchors_range' section of accuracy.json)
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(REPO / "bench"))

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from anchors import store_section  # noqa: E402
from anchors_sources import abilities, scratch_warehouse, source_interval, truths  # noqa: E402
from models.default.ability import leaf_logits  # noqa: E402
from models.default.shrinkage import robust_range  # noqa: E402
from models.anchors.range import (SHARE, era_side, leaf_range_shares, range_side, robust_bounds,  # noqa: E402
                                  widen_to_bounds)

SHARED = REPO.parent / "shared"
SPLITS = ["loo", "family", "low-3", "high-3"]
DETECTORS = ["ability", "robust", "leaves", "era", "ability+era", "source-ability", "source-ability+era"]


def leaf_matrix(con) -> tuple[list[str], list[str], np.ndarray]:
    """(models, leaves, (n, L) logit leaf means over source leaves, collapsed cells left out, NaN = none)."""
    rows = con.execute("""
        SELECT s.model, s.benchmark || '/' || s.subdir AS leaf, avg(s.score) AS leaf_mean
        FROM scores AS s JOIN benchmarks AS b USING (benchmark)
        ANTI JOIN collapsed_scores AS c
          ON c.model = s.model AND c.benchmark = s.benchmark AND c.subdir = s.subdir AND c.instance_id = s.instance_id
        WHERE b.role = 'source' AND s.score IS NOT NULL
        GROUP BY ALL""").fetchall()
    models = sorted({r[0] for r in rows})
    leaves = sorted({r[1] for r in rows})
    mi, li = {m: i for i, m in enumerate(models)}, {v: i for i, v in enumerate(leaves)}
    x = np.full((len(models), len(leaves)), np.nan)
    for m, leaf, v in rows:
        x[mi[m], li[leaf]] = v
    return models, leaves, leaf_logits(x)


def run_split(con, split: str) -> tuple[dict, dict]:
    """The default method's held-out predictions of the warehouse's own ``split`` ({(model, target):
    predicted}) and every fold's source abilities ({fold: {model: theta}}: the scale fitted without the fold's
    held-out models, as `pace fit --exclude` fits it), from one evaluation."""
    from warehouse import methods
    from warehouse.evaluate import evaluate_split, read_folds, resolve
    from warehouse.matrices import build_matrices

    method = methods.get("default", "abs")
    m = build_matrices(con)
    folds = read_folds(con, split, m, None)
    evaluation = evaluate_split(con, method, "abs", folds, method.options({"count": 100, "seed": 42}))
    rows = resolve(con, evaluation.predictions)
    held = {(f, model) for f in folds.names for model in folds.held_out[f]}
    fold_of = {model: f for f, model in held}
    preds = {(model, t): float(p) for model, t, p in zip(*(rows.column(c).to_pylist()
                                                         for c in ("model", "target", "predicted")))
             if model in fold_of and p is not None and np.isfinite(p)}
    theta: dict = {}
    table = evaluation.predictions.tables["_theta"]
    for f, model, value in zip(*(table.column(c).to_pylist() for c in ("fold", "model", "theta"))):
        theta.setdefault(f, {})[model] = value
    return preds, theta


def ability_sides(theta: dict, judged: list[str], train_of: dict) -> tuple[dict, dict]:
    """({(model, target): side} with the [min, max] range, the same with the robust range), per target over
    ``train_of[target]``, the fold's training models with that target's truth."""
    plain, robust = {}, {}
    for target, train in train_of.items():
        values = np.array([theta[m] for m in train if theta.get(m) is not None], dtype=np.float64)
        lo, hi = float(values.min()), float(values.max())
        r_lo, r_hi = robust_range(values)
        for m in judged:
            a = theta.get(m)
            plain[(m, target)] = "" if a is None or lo <= a <= hi else ("below" if a < lo else "above")
            robust[(m, target)] = "" if a is None or r_lo <= a <= r_hi else ("below" if a < r_lo else "above")
    return plain, robust


def source_side(ability: dict, model: str, train: list[str]) -> str:
    """The model's source_ability (sql/029) against the training models' [min, max]."""
    lo = min(ability[m] for m in train if m in ability)
    hi = max(ability[m] for m in train if m in ability)
    a = ability.get(model)
    return "" if a is None or lo <= a <= hi else ("below" if a < lo else "above")


def leaf_and_era(models, leaves, z, judged: list[str], train: list[str], released: dict) -> dict:
    """{model: {"leaves": side, "era": side, "below": share, "above": share, "votes": n, "released": date}}."""
    row = {m: i for i, m in enumerate(models)}
    lo, hi = robust_bounds(z[[row[m] for m in train]])
    group = np.array([leaf.split("/")[0] for leaf in leaves])
    below, above, n = leaf_range_shares(z[[row[m] for m in judged]], lo, hi, group)
    side = range_side(below, above)
    era = era_side(np.array([released.get(m, np.nan) for m in judged]),
                   np.array([released.get(m, np.nan) for m in train]))
    return {m: {"leaves": str(side[k]), "era": str(era[k]), "below": round(float(below[k]), 3),
                "above": round(float(above[k]), 3), "votes": int(n[k]), "released": released.get(m)}
            for k, m in enumerate(judged)}


def one_side(sides: list[str]):
    """A model's verdict over its targets: the side when they agree, else 'mixed' (per_target says which)."""
    return sides[0] if len(set(sides)) == 1 else "mixed"


def release_years(shared: Path) -> dict:
    """{warehouse model name: release date in years} from the OpenHands Index metadata (13 of the 14 Pace
    models; Kimi-K2 and the unlabelled older models have none there)."""
    from anchors_data import SAME_MODEL

    out = {}
    for meta in sorted((shared / "openhands-index" / "results").glob("*/metadata.json")):
        info = json.loads(meta.read_text())
        try:
            y, m, d = (int(v) for v in info["release_date"].split("-"))
        except (KeyError, ValueError, AttributeError):
            continue
        out[SAME_MODEL.get(meta.parent.name, meta.parent.name)] = y + (m - 1) / 12 + (d - 1) / 365
    return out


def coverage(rows: list[dict], key_low: str, key_high: str) -> float:
    inside = [r[key_low] <= r["truth"] <= r[key_high] for r in rows]
    return 100 * float(np.mean(inside)) if inside else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None, help="write here instead of accuracy.json's section")
    args = ap.parse_args()
    if not (SHARED / "pace-results").is_dir():
        print(f"skipped: needs the real scores at {SHARED / 'pace-results'}")
        return
    started = time.perf_counter()
    result: dict = {"share": SHARE, "splits": {}, "unlabelled": {}}
    with tempfile.TemporaryDirectory() as tmp:
        con = scratch_warehouse(SHARED, Path(tmp))
        pace = sorted(m for (m,) in con.execute(
            "SELECT DISTINCT model FROM target_means WHERE n_scored > 0").fetchall())
        truth, plain_ability = truths(con), abilities(con)
        models, leaves, z = leaf_matrix(con)
        released = release_years(SHARED)
        runs = {split: run_split(con, split) for split in SPLITS}
        loo = runs["loo"][0]
        ext: dict = {}
        for split in SPLITS[1:]:
            for key, v in runs[split][0].items():
                ext.setdefault(key, []).append(v)
        folds: dict[str, dict[str, list[str]]] = {}
        for split in SPLITS:
            for fold, model in con.execute("SELECT fold, model FROM split_folds(?)", [split]).fetchall():
                folds.setdefault(split, {}).setdefault(fold, []).append(model)
        for split in SPLITS:
            preds, thetas = runs[split]
            rows = []
            flags: dict = {}
            for fold, held in folds[split].items():
                train = [m for m in pace if m not in held]
                theta = thetas[fold]
                targets = sorted({t for (_, t) in preds})
                train_of = {t: [m for m in train if (m, t) in truth] for t in targets}
                plain, robust = ability_sides(theta, held, train_of)
                other = leaf_and_era(models, leaves, z, held, train, released)
                for (model, target), p in preds.items():
                    if model not in held:
                        continue
                    side = {"ability": plain[(model, target)], "robust": robust[(model, target)],
                            "leaves": other[model]["leaves"], "era": other[model]["era"]}
                    side["ability+era"] = side["robust"] or side["era"]          # the product's rule
                    side["source-ability"] = source_side(plain_ability, model, train)
                    side["source-ability+era"] = side["source-ability"] or side["era"]
                    today = source_interval(model, target, p, set(train), loo, ext, truth, theta)
                    row = {"model": model, "target": target, "truth": truth[(model, target)], "predicted": p,
                           "low": today.low, "high": today.high}
                    for name in DETECTORS:
                        low, high = widen_to_bounds(np.array([today.low]), np.array([today.high]),
                                                    np.array([side[name]]))
                        row.update({f"flag_{name}": side[name], f"low_{name}": float(low[0]),
                                    f"high_{name}": float(high[0])})
                    rows.append(row)
                for model in held:
                    mine = [r for r in rows if r["model"] == model]
                    if mine:
                        flags[model] = {**other[model], "fold_ability": theta.get(model),
                                        **{name: one_side([r[f"flag_{name}"] for r in mine]) for name in DETECTORS},
                                        "per_target": {r["target"]: r["flag_ability+era"] for r in mine}}
            entry = {"flags": flags, "coverage_today_pct": coverage(rows, "low", "high"),
                     "width_today_pp": 100 * float(np.mean([r["high"] - r["low"] for r in rows]))}
            for name in DETECTORS:
                flagged = [r for r in rows if r[f"flag_{name}"]]
                entry[name] = {
                    "flagged": sorted({r["model"] for r in flagged}),
                    "coverage_widened_pct": coverage(rows, f"low_{name}", f"high_{name}"),
                    "width_widened_pp": 100 * float(np.mean([r[f"high_{name}"] - r[f"low_{name}"] for r in rows])),
                    "coverage_today_of_flagged_pct": coverage(flagged, "low", "high"),
                    "coverage_today_of_others_pct": coverage([r for r in rows if not r[f"flag_{name}"]], "low", "high"),
                    "mae_pp_of_flagged": 100 * float(np.mean([abs(r["predicted"] - r["truth"]) for r in flagged]))
                    if flagged else None,
                    "mae_pp_of_others": 100 * float(np.mean([abs(r["predicted"] - r["truth"]) for r in rows
                                                             if not r[f"flag_{name}"]]))}
                print(f"{split:7s} {name:18s} flags {entry[name]['flagged']}: coverage {entry['coverage_today_pct']:.0f} -> "
                      f"{entry[name]['coverage_widened_pct']:.0f} % (width {entry['width_today_pp']:.1f} -> "
                      f"{entry[name]['width_widened_pp']:.1f} pp); MAE flagged {entry[name]['mae_pp_of_flagged']} "
                      f"others {entry[name]['mae_pp_of_others']:.2f}", flush=True)
            result["splits"][split] = entry
        unlabelled = sorted(set(models) - set(pace))
        for m, v in leaf_and_era(models, leaves, z, unlabelled, pace, released).items():
            result["unlabelled"][m] = {**v, "source_ability": plain_ability.get(m)}
            print(f"  {m:28s} benchmarks below {v['below']:.2f} above {v['above']:.2f} of {v['votes']} -> "
                  f"{v['leaves'] or 'in range'}; era: {v['era'] or 'unknown' if v['released'] is None else v['era'] or 'in range'}")
        con.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"wrote {store_section('anchors_range', result, args.json)}")


if __name__ == "__main__":
    main()
