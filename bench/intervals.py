"""Do the prediction intervals mean what they say? Empirical coverage under leave-one-model-out.

For each model with target scores: fit the proxy on the other models (`pace fit --exclude MODEL`,
intervals from those models' own held-out residuals), predict the excluded model with the
`predictions` view, and count whether its actual target mean lies inside [low, high]. An 80 %
interval should hold about 80 % of the truths. Writes bench/results/intervals.json.

    .venv/bin/python bench/intervals.py [--methods default,compat] [--level 0.8]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from ingest.load import ingest_tree  # noqa: E402
from warehouse.connect import connect  # noqa: E402
from warehouse.fit import FitRequest, fit_and_store  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "pace-results" / "standardized_results"
SOURCE_SETS = {"v2": ["planbench", "mmmu", "visualpuzzles"], "all": None}


def coverage_run(db: Path, method: str, sources, level: float) -> dict:
    con = connect(db)
    models = [m for (m,) in con.execute("SELECT model FROM model_rows() ORDER BY row").fetchall()]
    truth_col = "mean" if method == "compat" else "mean_observed"   # each method's own notion of truth
    hits: dict[str, list[bool]] = {}
    widths: dict[str, list[float]] = {}
    started = time.perf_counter()
    for model in models:
        fit_and_store(con, FitRequest(method=method, count=100, B=300, seed=42, sources=sources,
                                      exclude=[model], level=level, tasks=("abs",)))
        for target, low, high, actual in con.execute(f"""
                SELECT p.target, p.low, p.high, t.{truth_col}
                FROM predictions p JOIN target_means t USING (model, target)
                WHERE p.model = ?""", [model]).fetchall():
            if actual is None or low is None:
                continue
            hits.setdefault(target, []).append(low <= actual <= high)
            widths.setdefault(target, []).append(high - low)
    con.close()
    per_target = {t: {"coverage": sum(h) / len(h), "n": len(h), "mean_width_pp": 100 * sum(widths[t]) / len(widths[t])}
                  for t, h in hits.items()}
    all_hits = [x for h in hits.values() for x in h]
    return {"method": method, "level": level, "per_target": per_target,
            "coverage": sum(all_hits) / len(all_hits), "n": len(all_hits),
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="default,compat")
    parser.add_argument("--level", type=float, default=0.8)
    parser.add_argument("--sources", default="v2,all", help="source sets: v2 (planbench mmmu visualpuzzles), all")
    args = parser.parse_args()
    if not REAL.is_dir():
        sys.exit(f"needs the real scores at {REAL}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.duckdb"
        ingest_tree(connect(base), REAL, Path(tmp) / "lake")
        for set_name in args.sources.split(","):
            for method in args.methods.split(","):
                db = Path(tmp) / f"{set_name}-{method}.duckdb"
                shutil.copy(base, db)
                row = dict(coverage_run(db, method, SOURCE_SETS[set_name], args.level), sources=set_name)
                print(json.dumps(row))
                results.append(row)
    out = REPO / "bench" / "results" / "intervals.json"
    out.write_text(json.dumps({"machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                               "protocol": __doc__.split("\n\n")[1].replace("\n", " "), "results": results},
                              indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
