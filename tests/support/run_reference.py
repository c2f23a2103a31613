"""Run the ``compat`` pipeline on the reference configurations and compare (test/bench helper).

Usage (prints one JSON document):  python -m tests.support.run_reference [v1 v2 ...]
Set ``OPENBLAS_CORETYPE=Haswell`` in the environment *before* the process
starts to get the BLAS kernels the reference outputs were produced with
(see ``models.compat.goal_a.COMPAT_NUMERICS_ENV``).
"""
from __future__ import annotations

import json
import sys
import time
from typing import Dict, List, Optional

from models.compat import goal_a as compat

from .compare import compare_predictions, selection_overlap
from .published_loader import load_published
from .reference import REFERENCE_SOURCES, read_autotune_configs, run_dir

RUNS = ("fit_abs_C100", "abs_C100_frozen", "abs_C100_autotune")


def run_one(data, run: str, n_jobs: int = 1):
    if run == "fit_abs_C100":
        return compat.fit_abs(data.X, data.Y, data.P, data.targets, models=data.models)
    if run == "abs_C100_frozen":
        return compat.loocv_abs_frozen(data.X, data.Y, data.P, data.targets, models=data.models,
                                       n_jobs=n_jobs)
    if run == "abs_C100_autotune":
        return compat.loocv_abs_autotune(data.X, data.Y, data.P, data.targets, models=data.models,
                                         n_jobs=n_jobs)
    raise ValueError(run)


def compare_all(folders: Optional[List[str]] = None, runs=RUNS, n_jobs: int = 1) -> Dict[str, dict]:
    out = {}
    for v in folders or sorted(REFERENCE_SOURCES):
        data = load_published(sources=REFERENCE_SOURCES[v])
        for run in runs:
            t0 = time.perf_counter()
            res = run_one(data, run, n_jobs)
            dt = time.perf_counter() - t0
            rd = run_dir(v, run)
            c = compare_predictions(res, rd)
            c["selection"] = selection_overlap(res, rd, data.X, data.col_meta)
            c["seconds"] = dt
            c["configs"] = {t: [cf.m, cf.nc_h, cf.nc_d, cf.q] for t, cf in res.configs.items()}
            if run == "abs_C100_autotune":
                c["ref_configs"] = {t: list(x) for t, x in read_autotune_configs(rd / "log.txt").items()}
            out[f"{v}/{run}"] = c
    return out


if __name__ == "__main__":
    print(json.dumps(compare_all(sys.argv[1:] or None)))
