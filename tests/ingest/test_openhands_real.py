"""`pace import openhands-index` on the real OpenHands Index copy (``../shared/openhands-index``), beside
the Pace target files of ``../shared/pace-results`` (skips, saying why, when either is absent). Checks
the counts and the quirks the index's README lists: per-instance runs that are not the run behind
``scores.json``, runs that differ from the Pace files, ``Minimax-2.7`` as a second spelling of
``MiniMax-M2.7``, null costs, instance files listing part of a benchmark."""
from __future__ import annotations

import shutil

import pytest

from ingest.load import ingest_tree
from ingest.openhands_index import KNOWN_SPELLINGS, import_index
from tests.conftest import REAL_TREE, SHARED
from warehouse.aliases import add_alias
from warehouse.connect import connect

INDEX = SHARED / "openhands-index"
TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")

pytestmark = pytest.mark.realdata
if not INDEX.is_dir() or not REAL_TREE.is_dir():
    pytest.skip("real data absent: ../shared/openhands-index or ../shared/pace-results not found beside the repo",
                allow_module_level=True)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The Pace target files (copied into a temporary tree: ingest never follows a link out of its tree) ingested with the README's DeepSeek alias, then the index."""
    tmp = tmp_path_factory.mktemp("oh_real")
    tree = tmp / "targets"
    for target in TARGETS:
        shutil.copytree(REAL_TREE / target, tree / target)
    con = connect(tmp / "pace.duckdb")
    add_alias(con, "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2")
    ingest_tree(con, tree)
    report = import_index(con, INDEX)
    yield con, report
    con.close()


def _kinds(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in report.anomalies:
        out.setdefault(a.kind, []).append(a)
    return out


def test_counts(imported):
    con, report = imported
    assert report.files == 240 and report.files_new == 240
    folders = con.execute("SELECT agent, count(DISTINCT index_model) FROM model_metadata GROUP BY ALL ORDER BY ALL"
                          ).fetchall()
    assert folders == [("acp-claude", 3), ("acp-codex", 2), ("acp-gemini", 1), ("openhands", 27),
                       ("openhands_subagents", 2)]
    assert con.execute("SELECT count(DISTINCT index_model) FROM agentic_runs WHERE agent = 'openhands'"
                       ).fetchone()[0] == 26                                     # Minimax-2.7: metadata only
    per_benchmark = dict(con.execute("""SELECT benchmark, count(*) FROM agentic_runs WHERE agent = 'openhands'
                                        GROUP BY ALL""").fetchall())
    assert per_benchmark == {"swebench": 26 * 500, "gaia": 25 * 165 + 158, "commit0": 26 * 16,
                             "swtbench": 11_208, "swebench_multimodal": 2_309}
    ids = dict(con.execute("SELECT benchmark, count(DISTINCT instance_id) FROM agentic_runs GROUP BY ALL").fetchall())
    assert ids == {"swebench": 500, "gaia": 165, "commit0": 16, "swtbench": 433, "swebench_multimodal": 103}
    assert con.execute("SELECT count(*) FROM reported_scores WHERE agent = 'openhands'").fetchone()[0] == 26 * 5
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'commit0'").fetchone() == ("target",)


def test_the_quirks_the_readme_lists(imported):
    con, report = imported
    found = _kinds(report)
    # Minimax-2.7: metadata and scores but no instance results, a second spelling of MiniMax-M2.7
    (second,) = found["second_spelling"]
    assert set(second.where.split(" / ")) == {"MiniMax-M2.7", "Minimax-2.7"}
    assert second.items == ["pace alias add Minimax-2.7 MiniMax-M2.7"]
    # per-instance runs that are not the run behind scores.json
    far = {a.where for a in found["reported_score_far"]}
    assert "alternative_agents/acp-claude/claude-opus-4-6/instance_results/commit0.json" in far
    assert "results/Qwen3-Coder-Next/instance_results/swt-bench.json" in far
    # null costs, and instance files listing part of a benchmark
    assert {a.where for a in found["null_costs"]} == {"commit0", "gaia", "swebench", "swebench_multimodal", "swtbench"}
    partial = {a.where: a.items for a in found["partial_instances"]}
    assert partial["gaia"] == ["Gemini-3.5-Flash 158"]
    assert "Qwen3-Coder-480B 415" in partial["swtbench"]
    # the README's spellings of Pace models are suggested, not applied
    suggested = {a.where: a.items[0] for a in found["alias_suggestion"]}
    assert suggested == {name: f"pace alias add {name} {model} --yes" for name, model in KNOWN_SPELLINGS.items()
                         if name != "DeepSeek-V3.2-Reasoner"}
    assert con.execute("SELECT count(*) FROM model_aliases").fetchone()[0] == 1


def test_runs_that_differ_from_the_pace_files_are_kept_and_reported(imported):
    con, _ = imported
    for name, model in KNOWN_SPELLINGS.items():
        if name != "DeepSeek-V3.2-Reasoner":
            add_alias(con, name, model, yes=True)  # the suggested lines: the preference rule then applies
    disagree = con.execute("""SELECT model, target, count(*) FROM source_disagreements WHERE target <> 'commit0'
                              GROUP BY ALL ORDER BY ALL""").fetchall()
    assert disagree == [("Claude-4.5-Sonnet", "gaia", 37), ("Claude-4.6-Opus", "swebench", 36)]
    # 13 of the 14 Pace models have index runs on the four targets; the Pace rows stay in scores
    both = con.execute("""SELECT count(DISTINCT model), count(*) FROM target_sources
                          WHERE source = 'openhands-index' AND target IN (SELECT unnest(?::VARCHAR[]))
                            AND model IN (SELECT model FROM target_sources WHERE source = 'pace')""",
                       [list(TARGETS)]).fetchone()
    assert both == (13, 52)
    assert con.execute("""SELECT count(*) FROM target_sources WHERE source = 'openhands-index' AND in_use
                          AND target <> 'commit0' AND model IN (SELECT model FROM target_sources
                                                                WHERE source = 'pace')""").fetchone()[0] == 0
