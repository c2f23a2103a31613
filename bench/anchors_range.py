"""Issue 23, item 5: does the out-of-range check catch the models it should, and do the intervals then tell
the truth? Measured on the 14 Pace models under the warehouse's own splits, and on the six older unlabelled
models (GPT-4o, ...) under the fit on all 14.

Detectors, each judging a held-out model against its fold's training models (labelled) only:
  ability   today's: source_ability (sql/029_source_ability.sql) outside the training models' [min, max] (as bench/accuracy.py
            and the predictions view use it)
  leaves    models.anchors.range: the share of the model's source benchmarks voting outside the training
            models' robust per-leaf range (second smallest / largest; a benchmark votes when most of its leaves
            lie outside) >= SHARE
  era       models.anchors.range.era_side: release date (OpenHands Index metadata) outside the training
            models' dates (unknown for Kimi-K2 and the six older models)
  ability+era  the proposal: either of the two
Intervals: today's (bench/anchors_sources.source_interval: what `pace fit` stores, out-of-range pooled with
extrapolation residuals), and the proposal: a model the leaves detector flags gets its bound on that side
moved to the floor reading (1 %) / the ceiling (100 %) (models.anchors.range.widen_to_bounds), per detector.

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
from anchors_sources import abilities, run_split, scratch_warehouse, source_interval, truths  # noqa: E402
from models.default.ability import leaf_logits  # noqa: E402
from models.anchors.range import (SHARE, era_side, leaf_range_shares, range_side, robust_bounds,  # noqa: E402
                                  widen_to_bounds)

SHARED = REPO.parent / "shared"
SPLITS = ["loo", "family", "low-3", "high-3"]
DETECTORS = ["ability", "leaves", "era", "ability+era"]


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


def verdicts(models, leaves, z, judged: list[str], train: list[str], ability: dict, released: dict) -> dict:
    """{model: {"ability": side, "leaves": side, "era": side, "below": share, "above": share, "votes": n}}."""
    row = {m: i for i, m in enumerate(models)}
    lo, hi = robust_bounds(z[[row[m] for m in train]])
    group = np.array([leaf.split("/")[0] for leaf in leaves])
    below, above, n = leaf_range_shares(z[[row[m] for m in judged]], lo, hi, group)
    side = range_side(below, above)
    era = era_side(np.array([released.get(m, np.nan) for m in judged]),
                   np.array([released.get(m, np.nan) for m in train]))
    lo_a = min(ability[m] for m in train if m in ability)
    hi_a = max(ability[m] for m in train if m in ability)
    out = {}
    for k, m in enumerate(judged):
        a = ability.get(m)
        out[m] = {"ability": "" if a is None or lo_a <= a <= hi_a else ("below" if a < lo_a else "above"),
                  "leaves": str(side[k]), "era": str(era[k]), "below": round(float(below[k]), 3),
                  "above": round(float(above[k]), 3), "votes": int(n[k]), "source_ability": a,
                  "released": released.get(m)}
        out[m]["ability+era"] = out[m]["ability"] or out[m]["era"]      # the proposal
    return out


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
        truth, ability = truths(con), abilities(con)
        models, leaves, z = leaf_matrix(con)
        released = release_years(SHARED)
        runs = {split: run_split(con, split) for split in SPLITS}
        ext: dict = {}
        for split in SPLITS[1:]:
            for key, v in runs[split].items():
                ext.setdefault(key, []).append(v)
        folds: dict[str, dict[str, list[str]]] = {}
        for split in SPLITS:
            for fold, model in con.execute("SELECT fold, model FROM split_folds(?)", [split]).fetchall():
                folds.setdefault(split, {}).setdefault(fold, []).append(model)
        for split in SPLITS:
            rows = []
            flags = {}
            for held in folds[split].values():
                train = [m for m in pace if m not in held]
                judged = verdicts(models, leaves, z, held, train, ability, released)
                flags.update(judged)
                for (model, target), p in runs[split].items():
                    if model not in held:
                        continue
                    today = source_interval(model, target, p, set(train), runs["loo"], ext, truth, ability)
                    row = {"model": model, "target": target, "truth": truth[(model, target)], "predicted": p,
                           "low": today.low, "high": today.high}
                    for name in DETECTORS:
                        low, high = widen_to_bounds(np.array([today.low]), np.array([today.high]),
                                                    np.array([judged[model][name]]))
                        row.update({f"flag_{name}": judged[model][name], f"low_{name}": float(low[0]),
                                    f"high_{name}": float(high[0])})
                    rows.append(row)
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
                print(f"{split:7s} {name:8s} flags {entry[name]['flagged']}: coverage {entry['coverage_today_pct']:.0f} -> "
                      f"{entry[name]['coverage_widened_pct']:.0f} % (width {entry['width_today_pp']:.1f} -> "
                      f"{entry[name]['width_widened_pp']:.1f} pp); MAE flagged {entry[name]['mae_pp_of_flagged']} "
                      f"others {entry[name]['mae_pp_of_others']:.2f}", flush=True)
            result["splits"][split] = entry
        unlabelled = sorted(set(models) - set(pace))
        for m, v in verdicts(models, leaves, z, unlabelled, pace, ability, released).items():
            result["unlabelled"][m] = v
            print(f"  {m:28s} ability {v['source_ability']:+.2f} ({v['ability'] or 'in range'}); benchmarks below "
                  f"{v['below']:.2f} above {v['above']:.2f} of {v['votes']} -> {v['leaves'] or 'in range'}; "
                  f"era: {v['era'] or 'unknown' if v['released'] is None else v['era'] or 'in range'}")
        con.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"wrote {store_section('anchors_range', result, args.json)}")


if __name__ == "__main__":
    main()
