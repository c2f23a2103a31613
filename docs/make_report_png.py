"""Regenerate docs/report.png, the README's picture of `pace report`, from SYNTHETIC data only.

    .venv/bin/python docs/make_report_png.py

Builds a small synthetic warehouse in a temporary folder (`pace demo-data`, 10 models, seed 3) in which
one model is new (its agentic target files are removed before ingest, so it is predicted from its
sources, not from its own agentic results as anchors), fits the proxies, stores LOOCV runs of the default method and two baselines, writes the
report for the held-out model and photographs its top in headless Chromium (tests/browser.py).
"""
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import chromium_page, skip_reason  # noqa: E402
from ingest.load import ingest_tree  # noqa: E402
from ingest.synthetic import generate_tree  # noqa: E402
from warehouse.connect import connect  # noqa: E402
from warehouse import Warehouse  # noqa: E402

SOURCES = "planbench,lifbench,repobench,ifeval"
HELD_OUT = "Orrin-4.5-Pro"
TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")


def main() -> None:
    if skip_reason():
        raise SystemExit(f"cannot take the screenshot: {skip_reason()}")
    with tempfile.TemporaryDirectory() as tmp:
        tree, db = Path(tmp) / "tree", Path(tmp) / "pace.duckdb"
        generate_tree(tree, n_models=10, seed=3, scale=0.2)
        for target in TARGETS:
            for path in (tree / target).rglob(f"{HELD_OUT}.csv"):
                path.unlink()
        con = connect(db, create=True)
        try:
            ingest_tree(con, tree, Path(tmp) / "lake")
        finally:
            con.close()
        wh = Warehouse(db)
        wh.fit(task="abs", sources=SOURCES, count=30)
        wh.loocv("abs", sources=SOURCES, count=30)
        wh.loocv("abs", sources=SOURCES, count=30, split="low-3")
        for baseline in ("mean", "bench-ridge"):
            wh.loocv("abs", method=baseline, sources=SOURCES)
        out = Path(tmp) / "report.html"
        wh.report(out, [HELD_OUT])
        with chromium_page(width=1100, height=1500) as page:
            page.goto(out.as_uri())
            page.locator('svg[data-chart="strip"] .pred-mark').first.hover()
            target = REPO / "docs" / "report.png"
            page.screenshot(path=str(target), clip={"x": 0, "y": 0, "width": 1100, "height": 1500})
            assert not page.pace_errors, page.pace_errors
    print(f"-> {target}")


if __name__ == "__main__":
    main()
