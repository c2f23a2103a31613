"""Ingest of the real published scores (skipped when ../shared/pace-results is absent)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ingest.load import ingest_tree
from warehouse.connect import connect

# spec/pace-method.md §17: the published loader's target means (3 decimals).
PUBLISHED_MEANS = {
    "Claude-4.5-Opus": (0.691, 0.766), "Claude-4.5-Sonnet": (0.588, 0.742), "Claude-4.6-Opus": (0.800, 0.748),
    "DeepSeek-V3.2": (0.503, 0.000), "GLM-4.7": (0.539, 0.734), "GPT-5.2": (0.655, 0.746),
    "GPT-5.2-Codex": (0.709, 0.738), "Gemini-3-Flash-Preview": (0.588, 0.746),
    "Gemini-3-Pro-Preview": (0.442, 0.706), "Kimi-K2": (0.436, 0.692), "Kimi-K2.5": (0.636, 0.688),
    "MiniMax-M2.1": (0.406, 0.688), "MiniMax-M2.5": (0.479, 0.726),
    "Qwen3-Coder-480B-A35B-Instruct": (0.339, 0.624),
}


@pytest.fixture(scope="module")
def real_wh(real_tree, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    con = connect(tmp / "pace.duckdb")
    report = ingest_tree(con, real_tree, tmp / "lake")
    return con, report


def _csv_rows_less_duplicates(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as fh:
        ids = [row["id"] for row in csv.DictReader(fh)]
    return len(set(ids))


def test_rows_per_leaf_equal_csv_rows_less_duplicates(real_wh, real_tree):
    con, report = real_wh
    expected: dict[tuple[str, str], int] = {}
    for path in real_tree.rglob("*.csv"):
        rel = path.relative_to(real_tree).parts
        leaf = (rel[0], rel[1] if len(rel) == 3 else "")
        expected[leaf] = expected.get(leaf, 0) + _csv_rows_less_duplicates(path)
    got = {(b, s): n for b, s, n in con.execute(
        "SELECT benchmark, subdir, count(*) FROM scores GROUP BY ALL").fetchall()}
    assert got == expected
    assert report.rows == sum(expected.values())


def test_target_means_match_published_table(real_wh):
    con, _ = real_wh
    got = {(m, t): v for m, t, v in con.execute(
        "SELECT model, target, mean FROM target_means WHERE target IN ('gaia', 'swebench') AND known").fetchall()}
    for model, (gaia, swebench) in PUBLISHED_MEANS.items():
        assert abs(round(got[(model, "gaia")], 3) - gaia) < 1e-6, model
        # the published loader's 0.0 for a model with no swebench file (spec §18 item 4) is NULL here:
        # no score at all is not a score of 0
        if model == "DeepSeek-V3.2":
            assert swebench == 0.0 and got[(model, "swebench")] is None
            continue
        assert abs(round(got[(model, "swebench")], 3) - swebench) < 1e-6, model
    assert len({m for m, _ in got}) == 14


def test_real_anomalies_reported(real_wh):
    _, report = real_wh
    by_kind = {}
    for a in report.anomalies:
        by_kind.setdefault(a.kind, []).append(a)
    assert [a.message for a in by_kind["out_of_range"]] == [
        "id '3_1_6' score 1.0555555555555556 outside [0, 1] (kept)"]
    assert "lifbench/multidoc-find_dup_text/MiniMax-M2.1.csv" == by_kind["out_of_range"][0].where
    unknown = by_kind["unknown_model"]
    assert len(unknown) == 1 and "DeepSeek-V3.2-Reasoner" in unknown[0].message
    assert "pace alias add DeepSeek-V3.2-Reasoner DeepSeek-V3.2" in unknown[0].message
    mm = [a for a in by_kind["target_rows_differ"] if a.where == "swebench_multimodal"]
    assert mm and "48-102" in mm[0].message
    assert any(a.where.startswith("bfcl/") for a in by_kind["differing_ids"])


@pytest.mark.realdata
def test_the_holdout_tree_s_noise_is_held_out(real_tree, tmp_path):
    """../shared/holdout-sources: beir_nfcorpus (16 rows of NDCG/MAP@k) excluded, the model
    openai_nvidia_nvidia-nemotron-3-nano-30b-a3b-bf16 held as a spelling of Nemotron-3-Nano (issue 19)."""
    from tests.conftest import SHARED

    holdout = SHARED / "holdout-sources" / "standardized_results"
    if not holdout.is_dir():
        pytest.skip(f"real data absent: {holdout} not found")
    con = connect(tmp_path / "pace.duckdb")
    ingest_tree(con, real_tree, tmp_path / "lake")
    report = ingest_tree(con, holdout, tmp_path / "lake")
    kinds = {(a.kind, a.where) for a in report.anomalies if a.kind in ("aggregate_only", "second_spelling")}
    long = "openai_nvidia_nvidia-nemotron-3-nano-30b-a3b-bf16"
    assert kinds == {("aggregate_only", f"beir_nfcorpus/{long}.csv"), ("second_spelling", f"beir_nfcorpus/{long}.csv")}
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'beir_nfcorpus'").fetchone() == ("excluded",)
    assert con.execute("SELECT detail FROM model_holds WHERE model = ?", [long]).fetchone() == ("Nemotron-3-Nano",)
    assert long not in {m for (m,) in con.execute("SELECT model FROM model_rows()").fetchall()}
    con.close()
