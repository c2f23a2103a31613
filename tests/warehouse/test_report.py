"""`pace report`: the HTML page, its refusals, and the page itself in a real headless Chromium."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.browser import chromium_page, skip_reason
from tests.conftest import REPO
from tests.helpers import run_pace, synthetic_warehouse
from warehouse import Warehouse
from warehouse.fit import held_out_coverage, interval_offsets, loo_interval_coverage
from warehouse.report import MARKER, N_ANCHORS
from warehouse.report_html import render

SOURCES = "planbench,lifbench,ifeval"
HELD_OUT = "Orrin-4.5-Pro"
#: the screenshot of the last browser run, for review (gitignored: /out/)
SCREENSHOT = REPO / "out" / "report.png"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A small SYNTHETIC warehouse: an abs fit without HELD_OUT, and three LOOCV runs (default loo, mean loo
    and low-2)."""
    db, summary = synthetic_warehouse(tmp_path_factory.mktemp("report"), n_models=7, seed=5, scale=0.06)
    wh = Warehouse(db)
    wh.fit(task="abs", sources=SOURCES, count=12, exclude=HELD_OUT)
    wh.loocv("abs", sources=SOURCES, count=12)
    wh.loocv("abs", method="mean")
    wh.loocv("abs", method="mean", split="low-2")
    return db, summary


def _data(html: str) -> dict:
    blob = re.search(r'<script type="application/json" id="pace-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(blob)


def test_report_is_self_contained_and_holds_what_the_views_hold(fitted, tmp_path):
    db, summary = fitted
    out = tmp_path / "report.html"
    result = run_pace("report", out, "--model", HELD_OUT, "--db", db)
    assert result.exit_code == 0, result
    html = out.read_text(encoding="utf-8")
    assert MARKER in html and "SYNTHETIC data" in html
    # nothing to fetch when viewed: no external script, style, image or font
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "@import" not in html and "url(" not in html
    # the page's words are HTML, not Markdown: a command is <code>, never a literal `backtick`
    assert "`" not in re.sub(r"<script.*?</script>", "", html, flags=re.S)
    data = _data(html)
    trained = Warehouse(db).sql("SELECT target, len(trained_on) AS n FROM current_fits WHERE task = 'abs'",
                                output="tuples")[1]
    assert {t: len(v) for t, v in data["training"].items()} == dict(trained)
    assert [s["model"] for s in data["models"]] == [HELD_OUT]
    assert {r["method"] for r in data["loocv"]} == {"default", "mean"}
    mae = Warehouse(db).sql("SELECT m.mae FROM loocv_metrics m JOIN loocv_runs r USING (run_id) "
                            "WHERE r.method = 'mean' AND r.split = 'loo' AND m.target = 'AVERAGE'",
                            output="tuples")[1][0][0]
    assert [r["metrics"]["AVERAGE"]["mae"] for r in data["loocv"]
            if (r["method"], r["split"]) == ("mean", "loo")] == [pytest.approx(mae)]
    # HELD_OUT has agentic results of its own: an anchors estimate is labelled as one, never as a source proxy
    anchored = [p for p in data["models"][0]["predictions"] if p["method"] == "anchors"]
    assert anchored and all(p["anchors"] > 0 for p in anchored)
    for p in anchored:
        assert f"<td>anchors: {p['anchors']}, {p['prior']} prior</td>" in html
    assert not re.search(r"(Full|Restricted) proxy for [^<]*(" + "|".join(p["target"] for p in anchored) + ")", html)
    # the agentic anchors `pace plan --anchors 10` lists: one row per target of the current anchor fits
    plan = data["models"][0]["plan"]
    anchor_targets = sorted(r[0] for r in Warehouse(db).sql("SELECT DISTINCT target FROM current_anchor_fits",
                                                             output="tuples")[1])
    assert anchor_targets and [a["target"] for a in plan["anchors"]] == anchor_targets
    listed = {t.target: len(t.rows) for t in Warehouse(db).plan(HELD_OUT, anchors=N_ANCHORS).anchors}
    assert {a["target"]: a["listed"] for a in plan["anchors"]} == listed and sum(listed.values()) > 0
    assert f"--anchors {N_ANCHORS}</code>" in html
    inst = data["instances"]
    assert inst["most"][0]["informativeness"] >= inst["most"][-1]["informativeness"] >= \
        inst["least"][-1]["informativeness"] >= inst["least"][0]["informativeness"]


def test_held_out_coverage_judges_the_predictions_not_only_their_count():
    """A run is judged by the interval the loo residuals give: predictions all 30 pp off fall outside it.
    (Judging a run by its own residuals, as the report once did, gives 12 of 14 for both runs: a shift of
    every residual keeps their order.)"""
    rng = np.random.default_rng(0)
    truth = rng.uniform(0.2, 0.8, 14)
    loo = {(f"m{i}", "gaia"): (truth[i] + rng.normal(0, 0.03), truth[i]) for i in range(14)}
    exact = held_out_coverage(loo, loo, {}, set(), 0.8, logit_scale=False)
    off = {k: (p + 0.3, a) for k, (p, a) in loo.items()}
    shifted = held_out_coverage(off, loo, {}, set(), 0.8, logit_scale=False)
    assert exact["gaia"] == pytest.approx(12 / 14) and shifted["gaia"] == 0.0
    own = [a - p for p, a in off.values()]
    assert loo_interval_coverage(np.array(own), 0.8) == pytest.approx(12 / 14)   # what the old figure showed


def test_report_coverage_of_a_split_uses_the_loo_intervals(fitted, tmp_path):
    """The low-2 run's coverage is the share of its held-out truths inside prediction + the offsets of the
    other models' residuals in the mean method's loo run, recomputed here from the stored rows."""
    db, _ = fitted
    data = Warehouse(db).report(tmp_path / "r.html", [HELD_OUT])
    runs = {(r["method"], r["split"]): r for r in data["loocv"]}
    loo, low = runs[("mean", "loo")]["points"], runs[("mean", "low-2")]["points"]
    for target in sorted({p["target"] for p in low}):
        inside = []
        for p in (p for p in low if p["target"] == target):
            pool = np.array([q["actual"] - q["predicted"] for q in loo if q["target"] == target
                             and q["model"] != p["model"]])
            lo, hi = interval_offsets(pool, data["interval_level"])
            inside.append(lo <= p["actual"] - p["predicted"] <= hi)
        assert runs[("mean", "low-2")]["metrics"][target]["coverage"] == pytest.approx(np.mean(inside))


def test_report_refuses_what_it_did_not_write_and_bad_models(fitted, tmp_path):
    db, _ = fitted
    foreign = tmp_path / "notes.html"
    foreign.write_text("<html>mine</html>")
    result = run_pace("report", foreign, "--db", db)
    assert result.exit_code == 2 and "was not written by `pace report`" in result.stderr
    assert foreign.read_text() == "<html>mine</html>"
    out = tmp_path / "r.html"
    assert run_pace("report", out, "--db", db).exit_code == 0
    assert run_pace("report", out, "--db", db).exit_code == 0          # its own file: replaced
    before = out.read_bytes()
    result = run_pace("report", out, "--model", "NoSuchModel", "--db", db)
    assert result.exit_code == 2 and "NoSuchModel" in result.stderr
    assert out.read_bytes() == before                                 # a failed run leaves the file as it was
    assert not list(tmp_path.glob(".*pace-tmp"))
    assert run_pace("report", tmp_path / "missing" / "r.html", "--db", db).exit_code == 2
    assert run_pace("report", tmp_path, "--db", db).exit_code == 2


def test_no_fit_and_no_loocv_runs_are_said(tmp_path):
    db, summary = synthetic_warehouse(tmp_path, n_models=5, seed=2, scale=0.05)
    result = run_pace("report", tmp_path / "r.html", "--db", db)
    assert result.exit_code == 2 and "no fitted proxy" in result.stderr
    Warehouse(db).fit(task="abs", sources="planbench,ifeval", count=8, intervals=False)
    assert run_pace("report", tmp_path / "r.html", "--db", db).exit_code == 0
    assert "No LOOCV run is stored in this warehouse" in (tmp_path / "r.html").read_text()
    # a split run without its method's loo run: no interval to judge it by, so no coverage figure
    Warehouse(db).loocv("abs", method="mean", split="low-2")
    data = Warehouse(db).report(tmp_path / "r.html", [])
    [run] = data["loocv"]
    assert run["split"] == "low-2" and run["metrics"]["AVERAGE"]["mae"] is not None
    assert {t: m["coverage"] for t, m in run["metrics"].items()} == dict.fromkeys(run["metrics"])
    assert re.search(r"<td>[0-9.]+ / [-0-9.–]+ / –</td>", (tmp_path / "r.html").read_text())


def test_hostile_names_are_escaped(fitted, tmp_path):
    db, _ = fitted
    data = Warehouse(db).report(tmp_path / "r.html", [HELD_OUT])
    evil = '</script><script>alert(1)</script><img src=x onerror=alert(2)>'
    data["models"][0]["model"] = evil
    data["training"]["gaia"][0]["model"] = evil
    html = render(data)
    assert evil not in html and "<img" not in html
    assert _data(html)["models"][0]["model"] == evil


@pytest.mark.skipif(skip_reason() is not None, reason=f"browser test skipped: {skip_reason()}")
def test_report_in_headless_chromium(fitted, tmp_path):
    """The page loads with no console error and no network request, every chart has as many marks as
    the warehouse has points, hover shows a model's numbers, the target filter hides the others."""
    db, _ = fitted
    out = tmp_path / "report.html"
    data = Warehouse(db).report(out, [HELD_OUT])
    con = Warehouse(db).connect()
    try:
        trained = dict(con.execute("SELECT target, len(trained_on) FROM current_fits WHERE task = 'abs'").fetchall())
        points = dict(con.execute("""SELECT r.method, count(*) FROM loocv_predictions p JOIN loocv_runs r USING (run_id)
                                     WHERE p.predicted IS NOT NULL AND p.actual IS NOT NULL GROUP BY 1""").fetchall())
    finally:
        con.close()
    targets = sorted(trained)
    with chromium_page() as page:
        page.goto(out.as_uri())
        page.wait_for_load_state("load")
        assert page.pace_errors == []
        for t in targets:
            strip = page.locator(f'svg[data-chart="strip"][data-target="{t}"]')
            assert strip.count() == 1
            assert strip.locator(".train-dot").count() == trained[t]
            assert strip.locator(".pred-mark").count() == 1
            assert strip.locator(".pred-interval").count() == 1
        assert page.locator('svg[data-chart="scatter"] .loocv-point').count() == points["default"]
        assert page.locator('svg[data-chart="scatter"]').count() == len(targets)
        owed = [t for t in data["models"][0]["plan"]["targets"]]
        steps = len([r for r in data["models"][0]["plan"]["per_benchmark"] if r["calls"]])
        assert page.locator(".plan-step").count() == steps * len(owed)
        assert page.locator('table[data-list="most"] tbody tr').count() == len(data["instances"]["most"])
        assert page.locator("table.anchors tbody tr").count() == len(data["models"][0]["plan"]["anchors"]) + 1
        # hover: the tooltip names the model and its numbers (the SVG <title> became the script's tip)
        page.locator(f'svg[data-chart="strip"][data-target="{targets[0]}"] .pred-mark').hover()
        tip = page.locator("#tip")
        assert tip.is_visible() and HELD_OUT in tip.inner_text() and "predicted" in tip.inner_text()
        # the filter keeps one target's charts
        page.select_option("#target-filter", targets[1])
        assert page.locator(f'svg[data-chart="strip"][data-target="{targets[1]}"]').is_visible()
        assert not page.locator(f'svg[data-chart="strip"][data-target="{targets[0]}"]').is_visible()
        page.select_option("#target-filter", "")
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        shutil.copyfile(tmp_path / "report.png", SCREENSHOT)
        assert page.pace_errors == []
    assert Path(SCREENSHOT).stat().st_size > 10_000
    # without JavaScript: the same charts and tables, the browser's own tooltips, no filter to offer
    with chromium_page(javascript=False) as page:
        page.goto(out.as_uri())
        assert page.locator('svg[data-chart="strip"]').count() == len(targets)
        assert page.locator('svg[data-chart="strip"]').first.is_visible()
        assert page.locator(".pred-mark title").count() == len(targets)
        assert not page.locator("#target-filter").is_visible()
        assert page.pace_errors == []
