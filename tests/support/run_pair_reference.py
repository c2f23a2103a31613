"""Run the compat Goal B pipeline on the reference configurations and compare (test/bench helper).

Usage (prints one JSON document):  python -m tests.support.run_pair_reference [v1 v2 ...]
Set ``OPENBLAS_CORETYPE=Haswell`` (``models.compat.goal_a.COMPAT_NUMERICS_ENV``) in the environment
*before* the process starts to get the BLAS kernels the reference outputs were produced with.
"""
from __future__ import annotations

import csv
import json
import re
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from models.compat import goal_a as compat
from models.compat import goal_b as pair

from .published_loader import load_published
from .reference import REFERENCE_SOURCES, read_autotune_configs, run_dir

#: ``pair_C100_autotune_refA``: the auto-tune run with Goal A's configs taken from the reference log
#: (isolates Goal B from a Goal A auto-tune residual); compared with ``pair_C100_autotune``.
RUNS = ("pair_C100_frozen", "pair_C100_autotune", "pair_C100_autotune_refA")

_ACC = re.compile(r"^(\S+)\s+(-?[\d.]+)%\s+(\d+)\s*$")
_AVG = re.compile(r"^AVERAGE\s+(-?[\d.]+)%\s*$")
_PLATT = re.compile(r"^(\S+)\s+a=\s*(-?[\d.]+)\s+b=\s*([+-]?[\d.]+)\s*$")
_BCFG = re.compile(r'"(\w+)": dict\(m=([\d.]+), nc_h=\s*(\d+), nc_d=\s*(\d+), reg="(\w+)"\)')


def read_pair_log(path: Path) -> Dict[str, object]:
    """Accuracy table (fraction, N), Platt (a, b) and the auto-tuned Goal B configs of a pair log."""
    acc, platt, cfg = {}, {}, {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        s = line.strip()
        m = _ACC.match(s)
        if m:
            acc[m.group(1)] = (float(m.group(2)) / 100.0, int(m.group(3)))
            continue
        m = _AVG.match(s)
        if m:
            acc["AVERAGE"] = (float(m.group(1)) / 100.0, None)
            continue
        m = _PLATT.match(s)
        if m:
            platt[m.group(1)] = (float(m.group(2)), float(m.group(3)))
            continue
        m = _BCFG.search(line)
        if m:
            cfg[m.group(1)] = (float(m.group(2)), int(m.group(3)), int(m.group(4)))
    return {"accuracy": acc, "platt": platt, "configs": cfg}


def read_pair_predictions(path: Path) -> Dict[tuple, dict]:
    """(held_out, other, target) → row dict (pred_margin, pred_winner, pred_prob_heldout_wins, ...)."""
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            out[(r["held_out"], r["other"], r["target"])] = r
    return out


def ref_a_configs(folder: str):
    rd = run_dir(folder, "pair_C100_autotune")
    return {t: compat.AbsConfig(m, h, d, q) for t, (m, h, d, q) in read_autotune_configs(rd / "log.txt").items()}


def run_one(data, run: str, n_jobs: int = 1, folder: Optional[str] = None):
    if run == "pair_C100_frozen":
        return pair.loocv_pair_frozen(data.X, data.Y, data.P, data.targets, models=data.models,
                                      n_jobs=n_jobs)
    if run == "pair_C100_autotune":
        return pair.loocv_pair_autotune(data.X, data.Y, data.P, data.targets, models=data.models,
                                        n_jobs=n_jobs)
    if run == "pair_C100_autotune_refA":
        return pair.loocv_pair_autotune(data.X, data.Y, data.P, data.targets, models=data.models,
                                        n_jobs=n_jobs, a_configs=ref_a_configs(folder))
    raise ValueError(run)


def compare_pair(res, run: Path) -> Dict[str, object]:
    """Per-target accuracy deltas, winner agreement, margin sign/relative agreement, Platt deltas."""
    log = read_pair_log(run / "log.txt")
    ref = read_pair_predictions(run / "pair_predictions.csv")
    per_t = {}
    models = res.models
    for t_i, t in enumerate(res.targets):
        agree, tot, rel, prob_d = 0, 0, [], []
        for k, mk in enumerate(models):
            for j, mj in enumerate(models):
                if k == j:
                    continue
                r = ref[(mk, mj, t)]
                mine = mk if res.margins[k, j, t_i] > 0 else mj
                agree += mine == r["pred_winner"]
                tot += 1
                rm = float(r["pred_margin"])
                rel.append(abs(res.margins[k, j, t_i] - rm) / max(abs(rm), 1e-9))
                prob_d.append(abs(res.prob[k, j, t_i] - float(r["pred_prob_heldout_wins"])))
        ra, rn = log["accuracy"][t]
        a, b = res.platt[t]
        ref_ab = log["platt"].get(t, (float("nan"), float("nan")))
        per_t[t] = {"acc": res.accuracy[t], "ref_acc": ra, "d_acc_pp": 100 * (res.accuracy[t] - ra),
                    "n": res.count[t], "ref_n": rn, "winner_agree": agree / tot,
                    "margin_rel_1e-6": float(np.mean(np.array(rel) <= 1e-6)),
                    "margin_rel_1e-2": float(np.mean(np.array(rel) <= 1e-2)),
                    "platt": [a, b], "ref_platt": list(ref_ab),
                    "d_platt": [a - ref_ab[0], b - ref_ab[1]],
                    "max_prob_diff": float(np.max(prob_d))}
    out = {"per_target": per_t, "average": res.accuracy["AVERAGE"],
           "ref_average": log["accuracy"]["AVERAGE"][0],
           "configs": {t: [c.m, c.nc_h, c.nc_d] for t, c in res.configs.items()}}
    if log["configs"]:
        out["ref_configs"] = {t: list(v) for t, v in log["configs"].items()}
    return out


def compare_all(folders: Optional[List[str]] = None, runs=RUNS, n_jobs: int = 1) -> Dict[str, dict]:
    out = {}
    for v in folders or sorted(REFERENCE_SOURCES):
        data = load_published(sources=REFERENCE_SOURCES[v])
        for run in runs:
            t0 = time.perf_counter()
            res = run_one(data, run, n_jobs, folder=v)
            dt = time.perf_counter() - t0
            c = compare_pair(res, run_dir(v, run.replace("_refA", "")))
            c["seconds"] = dt
            out[f"{v}/{run}"] = c
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    runs = RUNS
    if "--runs" in args:
        i = args.index("--runs")
        runs = tuple(args[i + 1].split(","))
        args = args[:i] + args[i + 2:]
    print(json.dumps(compare_all(args or None, runs=runs)))
