"""Does the product's out-of-range rule flag the models bench/anchors_range.py's `ability+era` detector
flags? On the real data, leave-one-out over the Pace models with target scores: each model is held out of a
`pace fit --targets gaia,swebench,swebench_multimodal,swtbench` (Warehouse.fit(exclude=[M]): its target rows
unseen, it is a new model to the fit; the four targets of bench/anchors_range.py's warehouse, so that the
instances the proxies select, which the ability scale leaves out, are the same) and its rows of `predictions`
say range_side / range_reason per target. Compared, per model and target, with the `ability+era` flags of the
loo split in accuracy.json's `anchors_range` section (run bench/anchors_range.py first).

The warehouse: pace-results and unlabelled-sources, the OpenHands Index (its metadata gives the release
dates), the README's spellings aliased (DeepSeek-V3.2-Reasoner -> DeepSeek-V3.2, claude-opus-4-5 ->
Claude-4.5-Opus, ...), as bench/anchors_walkthrough.py builds it.

    .venv/bin/python bench/anchors_range_check.py [--work DIR] [--json OUT]   (default: accuracy.json's
        'anchors_range_check' section)
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.append(str(Path(__file__).resolve().parent))           # after the repo: bench helpers only

from anchors import store_section  # noqa: E402
from ingest.openhands_index import KNOWN_SPELLINGS  # noqa: E402
from warehouse.api import Warehouse  # noqa: E402
from workdir import claim  # noqa: E402

SHARED = REPO.parent / "shared"
PACE_TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")


def build(work: Path) -> Warehouse:
    """The scratch warehouse of the module doc, in ``work`` (an earlier run's is built again)."""
    for earlier in ("pace.duckdb", "pace.duckdb.wal"):
        (work / earlier).unlink(missing_ok=True)
    shutil.rmtree(work / "lake", ignore_errors=True)
    wh = Warehouse(work / "pace.duckdb", lake=work / "lake")
    wh.ingest(SHARED / "pace-results" / "standardized_results")
    for alias, name in KNOWN_SPELLINGS.items():
        wh.alias_add(alias, name, yes=True)
    wh.ingest(SHARED / "unlabelled-sources" / "standardized_results")
    wh.import_openhands_index(SHARED / "openhands-index")
    return wh


def product_flags(wh: Warehouse, model: str) -> dict:
    """``model`` held out of a fit: {target: (range_side, range_reason)} of its rows in ``predictions``."""
    wh.fit(task="abs", intervals=False, anchors=False, exclude=[model], targets=list(PACE_TARGETS))
    with wh.connect() as con:
        rows = con.execute("""SELECT target, range_side, range_reason FROM predictions
                              WHERE model = ? AND target IN (SELECT unnest(?::VARCHAR[])) ORDER BY target""",
                           [model, list(PACE_TARGETS)]).fetchall()
    return {t: (side or "", reason or "") for t, side, reason in rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None, help="a new or empty folder (default: a temporary one)")
    ap.add_argument("--json", type=Path, default=None, help="write here instead of accuracy.json's section")
    args = ap.parse_args()
    if not (SHARED / "openhands-index").is_dir():
        raise SystemExit(f"skipped: needs the real data at {SHARED}")
    accuracy = json.loads((REPO / "bench" / "results" / "accuracy.json").read_text())
    bench = accuracy.get("anchors_range", {}).get("splits", {}).get("loo")
    if bench is None:
        raise SystemExit("no anchors_range section in accuracy.json: run bench/anchors_range.py first")
    started = time.perf_counter()
    temporary = args.work is None
    work = claim(args.work or Path(tempfile.mkdtemp(prefix="pace-range-check-")), "pace-anchors-range-check")
    try:
        wh = build(work)
        with wh.connect() as con:
            labelled = [m for (m,) in con.execute("""SELECT DISTINCT model FROM target_means JOIN models USING (model)
                                                     WHERE n_scored > 0 AND models.known AND target IN
                                                     (SELECT unnest(?::VARCHAR[])) ORDER BY model""",
                                                  [list(PACE_TARGETS)]).fetchall()]
        result: dict = {"models": {}, "detector": "ability+era"}
        for model in labelled:
            flags = product_flags(wh, model)
            expected = bench["flags"].get(model, {}).get("per_target", {})
            same = all(flags.get(t, ("", ""))[0] == expected.get(t, "") for t in PACE_TARGETS)
            result["models"][model] = {"product": flags, "bench": expected, "same": same}
            shown = ", ".join(f"{t} {side} ({reason})" for t, (side, reason) in flags.items() if side) or "in range"
            print(f"{model:32s} {'same' if same else 'DIFFERENT'}: product {shown}; bench "
                  f"{', '.join(f'{t} {v}' for t, v in expected.items() if v) or 'in range'}", flush=True)
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    same = [m for m, v in result["models"].items() if v["same"]]
    result["agree"] = f"{len(same)} of {len(result['models'])}"
    result["product_flagged"] = sorted(m for m, v in result["models"].items()
                                       if any(side for side, _ in v["product"].values()))
    result["bench_flagged"] = sorted(m for m, v in result["models"].items() if any(v["bench"].values()))
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"agree on {result['agree']} models; product flags {result['product_flagged']}, bench flags "
          f"{result['bench_flagged']}")
    print(f"wrote {store_section('anchors_range_check', result, args.json)}")


if __name__ == "__main__":
    main()
