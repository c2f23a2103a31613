"""Wall-time of the headline compat runs (helper, not a test).

python -m tests.support.bench_compat [v2 v4] [--jobs N]
Times ``abs --count 100 --B 300 --seed 42 --auto-tune --strict-budget`` (and the
frozen / fit-all runs) on the reference folders' sources; loading excluded.
"""
from __future__ import annotations

import sys
import time

from models.compat import goal_a as compat

from .published_loader import load_published
from .reference import REFERENCE_SOURCES


def main(argv):
    jobs = 1
    if "--jobs" in argv:
        i = argv.index("--jobs")
        jobs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    for v in argv or ["v2", "v4"]:
        t0 = time.perf_counter()
        d = load_published(sources=REFERENCE_SOURCES[v])
        t_load = time.perf_counter() - t0
        for name, fn in (
            ("fit_abs", lambda: compat.fit_abs(d.X, d.Y, d.P, d.targets)),
            ("abs frozen", lambda: compat.loocv_abs_frozen(d.X, d.Y, d.P, d.targets, n_jobs=jobs)),
            ("abs autotune", lambda: compat.loocv_abs_autotune(d.X, d.Y, d.P, d.targets, n_jobs=jobs)),
        ):
            t0 = time.perf_counter()
            fn()
            print(f"{v} X={d.X.shape} {name:13s} {time.perf_counter() - t0:6.2f} s  (load {t_load:.2f} s, jobs={jobs})")


if __name__ == "__main__":
    main(sys.argv[1:])
