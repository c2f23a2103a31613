"""Issue 23, item 5: does the out-of-range check catch the models it should, and do the intervals then tell
the truth? Measured on the 14 Pace models under the warehouse's own splits, and on the six older unlabelled
models (GPT-4o, ...) under the fit on all 14.

Detectors, each judging a held-out model against its fold's training models (labelled) only:
  ability   today's: source_ability (sql/020) outside the training models' [min, max] (as bench/accuracy.py
            and the predictions view use it)
  leaves    models.anchors.range: the share of the model's source leaves (logit leaf means, collapsed cells
            out) outside the training models' robust per-leaf range (second smallest / largest) >= SHARE
Intervals: today's (bench/anchors_sources.source_interval: what `pace fit` stores, out-of-range pooled with
extrapolation residuals), and the proposal: a model the leaves detector flags gets its bound on that side
moved to the floor reading (1 %) / the ceiling (100 %) (models.anchors.range.widen_to_bounds).

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

from anchors_sources import abilities, run_split, scratch_warehouse, source_interval, truths  # noqa: E402
from models.ability import leaf_logits  # noqa: E402
from models.anchors.range import SHARE, leaf_range_shares, range_side, robust_bounds, widen_to_bounds  # noqa: E402

SHARED = REPO.parent / "shared"
SPLITS = ["loo", "family", "low-3", "high-3"]


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


def verdicts(models, z, judged: list[str], train: list[str], ability: dict) -> dict:
    """{model: {"ability": side, "leaves": side, "below": share, "above": share, "leaves_n": n}}."""
    row = {m: i for i, m in enumerate(models)}
    lo, hi = robust_bounds(z[[row[m] for m in train]])
    below, above, n = leaf_range_shares(z[[row[m] for m in judged]], lo, hi)
    side = range_side(below, above)
    lo_a = min(ability[m] for m in train if m in ability)
    hi_a = max(ability[m] for m in train if m in ability)
    out = {}
    for k, m in enumerate(judged):
        a = ability.get(m)
        out[m] = {"ability": "" if a is None or lo_a <= a <= hi_a else ("below" if a < lo_a else "above"),
                  "leaves": str(side[k]), "below": round(float(below[k]), 3), "above": round(float(above[k]), 3),
                  "leaves_n": int(n[k]), "source_ability": a}
    return out


def coverage(rows: list[dict], key_low: str, key_high: str) -> float:
    inside = [r[key_low] <= r["truth"] <= r[key_high] for r in rows]
    return 100 * float(np.mean(inside)) if inside else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None, help="write here instead of accuracy.json's section")
    args = ap.parse_args()
    started = time.perf_counter()
    result: dict = {"share": SHARE, "splits": {}, "unlabelled": {}}
    with tempfile.TemporaryDirectory() as tmp:
        con = scratch_warehouse(SHARED, Path(tmp))
        pace = sorted(m for (m,) in con.execute(
            "SELECT DISTINCT model FROM target_means WHERE n_scored > 0").fetchall())
        truth, ability = truths(con), abilities(con)
        models, _, z = leaf_matrix(con)
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
                judged = verdicts(models, z, held, train, ability)
                flags.update(judged)
                for (model, target), p in runs[split].items():
                    if model not in held:
                        continue
                    today = source_interval(model, target, p, set(train), runs["loo"], ext, truth, ability)
                    low, high = widen_to_bounds(np.array([today.low]), np.array([today.high]),
                                                np.array([judged[model]["leaves"]]))
                    rows.append({"model": model, "target": target, "truth": truth[(model, target)],
                                 "predicted": p, "low": today.low, "high": today.high,
                                 "low_new": float(low[0]), "high_new": float(high[0]),
                                 "flag_ability": judged[model]["ability"], "flag_leaves": judged[model]["leaves"]})
            entry = {"flags": flags,
                     "coverage_today_pct": coverage(rows, "low", "high"),
                     "coverage_proposed_pct": coverage(rows, "low_new", "high_new"),
                     "width_today_pp": 100 * float(np.mean([r["high"] - r["low"] for r in rows])),
                     "width_proposed_pp": 100 * float(np.mean([r["high_new"] - r["low_new"] for r in rows]))}
            for name in ("ability", "leaves"):
                flagged = [r for r in rows if r[f"flag_{name}"]]
                entry[f"flagged_by_{name}"] = sorted({r["model"] for r in flagged})
                entry[f"coverage_today_flagged_by_{name}_pct"] = coverage(flagged, "low", "high")
                entry[f"mae_pp_flagged_by_{name}"] = 100 * float(np.mean([abs(r["predicted"] - r["truth"])
                                                                          for r in flagged])) if flagged else None
            result["splits"][split] = entry
            print(f"{split:7s} today {entry['coverage_today_pct']:.0f} %  proposed {entry['coverage_proposed_pct']:.0f} % "
                  f"(width {entry['width_today_pp']:.1f} -> {entry['width_proposed_pp']:.1f} pp); "
                  f"ability flags {entry['flagged_by_ability']}; leaves flags {entry['flagged_by_leaves']}", flush=True)
        unlabelled = sorted(set(models) - set(pace))
        for m, v in verdicts(models, z, unlabelled, pace, ability).items():
            result["unlabelled"][m] = v
            print(f"  {m:28s} ability {v['source_ability']:+.2f} ({v['ability'] or 'in range'}); leaves below "
                  f"{v['below']:.2f} above {v['above']:.2f} of {v['leaves_n']} -> {v['leaves'] or 'in range'}")
        for m in pace:
            train = [x for x in pace if x != m]
            v = verdicts(models, z, [m], train, ability)[m]
            result.setdefault("labelled_loo", {})[m] = v
        con.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = args.json
    if out is None:
        out = REPO / "bench" / "results" / "accuracy.json"
        saved = json.loads(out.read_text()) if out.is_file() else {}
        saved["anchors_range"] = result
        result = saved
    out.write_text(json.dumps(result, indent=1, default=float))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
