"""Ingest noise (issue 19): aggregate-only files and second spellings of a model are reported with what to run
and kept out of fits until the user says otherwise; reports stay bounded; the tree walk never leaves the tree
and lists what it skipped. Small hand-made trees only."""
from __future__ import annotations

import json
import os

import pytest

from ingest.errors import IngestError
from ingest.load import ingest_tree
from ingest.noise import is_metric_name, second_spelling_of
from ingest.report import EXAMPLES
from tests.helpers import run_pace, write_csv
from warehouse.connect import connect

METRICS = ["NDCG@1", "NDCG@5", "NDCG@10", "MAP@1", "MAP@5", "MAP@10", "Recall@1", "Recall@10", "P@1", "P@10"]
LONG = "openai_nvidia_nvidia-nemotron-3-nano-30b-a3b-bf16"


def rows(ids, score=lambda k: (k % 3) / 2) -> str:
    return "id,score,metric_name\n" + "".join(f"{i},{score(k)},acc\n" for k, i in enumerate(ids))


def tree(root, models=("Nemotron-3-Nano", "Kimi-K2", "GLM-5"), n=12):
    """Two per-instance source benchmarks for ``models``."""
    for bench in ("alpha", "beta"):
        for m in models:
            write_csv(root / bench / f"{m}.csv", rows([f"q{k}" for k in range(n)]))
    return root


def _ingest(tmp_path, root, **kw):
    con = connect(tmp_path / "w.duckdb")
    return con, ingest_tree(con, root, tmp_path / "lake", **kw)


def test_an_aggregate_only_benchmark_is_reported_and_excluded_until_set_back(tmp_path):
    root = tree(tmp_path / "tree")
    write_csv(root / "beir" / "GLM-5.csv", rows(METRICS, score=lambda k: 0.1 + k / 100))
    con, report = _ingest(tmp_path, root)
    found = [a for a in report.anomalies if a.kind == "aggregate_only"]
    assert [a.where for a in found] == ["beir/GLM-5.csv"]
    assert "10 rows whose ids are metric names" in found[0].message
    assert "`pace benchmarks set beir source` takes it back" in found[0].message
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'beir'").fetchone() == ("excluded",)
    assert any("beir: role excluded" in n for n in report.notes)
    # out of fits: no source column of beir
    assert con.execute("SELECT count(*) FROM source_columns(NULL) WHERE benchmark = 'beir'").fetchone() == (0,)
    con.execute("INSERT OR REPLACE INTO benchmarks VALUES ('beir', 'source')")   # the user takes it back
    again = ingest_tree(con, root, tmp_path / "lake")
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'beir'").fetchone() == ("source",)
    assert [a.kind for a in again.anomalies if a.where == "beir/GLM-5.csv"] == ["aggregate_only"]


def test_aggregate_files_of_a_known_benchmark_are_reported_only_and_strict_refuses(tmp_path):
    root = tree(tmp_path / "tree")
    con, _ = _ingest(tmp_path, root)
    write_csv(root / "alpha" / "Newcomer.csv", rows(["accuracy", "f1", "exact_match"]))
    write_csv(root / "gamma" / "Kimi-K2.csv", rows(METRICS))
    before = con.execute("SELECT * FROM benchmarks ORDER BY ALL").fetchall()
    with pytest.raises(IngestError, match="(?s)strict=True: .*aggregate_only"):
        ingest_tree(con, root, tmp_path / "lake", strict=True)
    assert con.execute("SELECT * FROM benchmarks ORDER BY ALL").fetchall() == before
    report = ingest_tree(con, root, tmp_path / "lake")
    kinds = {a.where: a.message for a in report.anomalies if a.kind == "aggregate_only"}
    assert set(kinds) == {"alpha/Newcomer.csv", "gamma/Kimi-K2.csv"}
    assert "count as source rows" in kinds["alpha/Newcomer.csv"]
    assert dict(con.execute("SELECT benchmark, role FROM benchmarks WHERE benchmark IN ('alpha', 'gamma')")
                .fetchall()) == {"alpha": "source", "gamma": "excluded"}


def test_metric_names_and_second_spellings():
    assert all(map(is_metric_name, METRICS + ["accuracy", "ndcg_cut_10", "rouge-L"]))
    assert not any(map(is_metric_name, ["q1", "p1", "0_6_9", "python3_faulty indexing", "MAPLE", "1"]))
    known = ["Nemotron-3-Nano", "Kimi-K2", "Kimi-K2.5", "GPT-5.2", "Qwen3-Coder-480B-A35B-Instruct", "MiniMax-M2.1"]
    assert second_spelling_of(LONG, known) == "Nemotron-3-Nano"
    assert second_spelling_of("nemotron_3_nano", known) == "Nemotron-3-Nano"
    assert second_spelling_of("moonshotai/Kimi-K2", known) == "Kimi-K2"
    assert second_spelling_of("Qwen3-Coder-480B-A35B-Instruct-FP8", known) == "Qwen3-Coder-480B-A35B-Instruct"
    for other in ("Kimi-K2.5", "GPT-5.2-Codex", "MiniMax-M2.5", "DeepSeek-V3.2-Reasoner", "Kimi-K2.6"):
        assert second_spelling_of(other, known) in (None, other), other


def test_a_second_spelling_is_held_out_of_fits_until_aliased_or_kept(tmp_path):
    root = tree(tmp_path / "tree")
    write_csv(root / "alpha" / f"{LONG}.csv", rows([f"q{k}" for k in range(12)]))
    con, report = _ingest(tmp_path, root)
    held = [a for a in report.anomalies if a.kind == "second_spelling"]
    assert len(held) == 1 and f"`pace alias add {LONG} Nemotron-3-Nano`" in held[0].message
    assert f"`pace alias keep {LONG}`" in held[0].message
    assert not [a for a in report.anomalies if a.kind == "unknown_model"]
    assert con.execute("SELECT known, held FROM models WHERE model = ?", [LONG]).fetchone() == (False, True)
    assert LONG not in {m for (m,) in con.execute("SELECT model FROM model_rows()").fetchall()}
    assert len(con.execute("SELECT model FROM model_rows()").fetchall()) == 3
    # reported again on the next ingest, still held; a model of the warehouse is never held afterwards
    again = ingest_tree(con, root, tmp_path / "lake")
    assert [a.kind for a in again.anomalies if a.kind == "second_spelling"] == ["second_spelling"]
    db = tmp_path / "w.duckdb"
    con.close()
    kept = run_pace("alias", "keep", LONG, "--db", db)
    assert kept.exit_code == 0 and "a model of its own" in " ".join(kept.stdout.split()), kept
    con = connect(db, read_only=True)
    assert con.execute("SELECT known, held FROM models WHERE model = ?", [LONG]).fetchone() == (True, False)
    con.close()
    assert run_pace("alias", "keep", "Kimi-K2", "--db", db).exit_code == 2


def test_aliasing_a_held_spelling_merges_it_and_lifts_the_hold(tmp_path):
    root = tree(tmp_path / "tree")
    write_csv(root / "gamma" / f"{LONG}.csv", rows([f"z{k}" for k in range(12)]))
    con, _ = _ingest(tmp_path, root)
    con.close()
    db = tmp_path / "w.duckdb"
    merged = run_pace("alias", "add", LONG, "Nemotron-3-Nano", "--db", db)
    assert merged.exit_code == 0 and "12 existing rows renamed in gamma" in " ".join(merged.stdout.split()), merged
    con = connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM model_holds").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM scores WHERE model = 'Nemotron-3-Nano' AND benchmark = 'gamma'"
                       ).fetchone() == (12,)


def test_reports_are_bounded(tmp_path):
    """10^5 ids repeated with other scores, 1,000 scores out of range, 30 files of one kind of anomaly: counts
    and the first examples only, in text and JSON (before: every id in the JSON, 8 MB at 10^6)."""
    root = tree(tmp_path / "tree")
    n = 100_000
    write_csv(root / "big" / "Kimi-K2.csv", "id,score,metric_name\n"
              + "".join(f"x{k},0,acc\n" for k in range(n)) + "".join(f"x{k},1,acc\n" for k in range(n)))
    write_csv(root / "wide" / "GLM-5.csv", rows([f"w{k}" for k in range(1000)], score=lambda k: 5.0))
    for k in range(30):
        write_csv(root / "gaia" / f"Stray-{k}.csv", rows(["q1"]))      # target rows only: unknown models
    db = tmp_path / "w.duckdb"
    result = run_pace("ingest", root, "--db", db, "--json")
    assert result.exit_code == 0, result
    assert len(result.stdout) < 60_000, len(result.stdout)
    report = json.loads(result.stdout)
    conflicts = [a for a in report["anomalies"] if a["kind"] == "conflicting_duplicates"]
    assert conflicts[0]["n_items"] == n and len(conflicts[0]["items"]) == EXAMPLES
    assert [a["message"][:41] for a in report["anomalies"] if a["kind"] == "out_of_range"] == [
        "1000 scores outside [0, 1] (kept): id 'w0"]
    assert report["anomaly_counts"]["unknown_model"] == 30
    assert report["anomalies_omitted"]["unknown_model"] == 30 - EXAMPLES
    text = run_pace("ingest", root, "--db", db)
    assert text.exit_code == 0 and len(text.stdout) < 20_000, len(text.stdout)
    assert f"... and {30 - EXAMPLES} more [unknown_model]" in text.stdout


def test_a_file_of_one_id_repeated_a_hundred_thousand_times_gives_a_short_report(tmp_path):
    """Each repetition is a whole run over the file's one id: the report names the number of runs and
    the first runs' means, not every mean (before: 7 MB of run means at 10^6)."""
    root = tree(tmp_path / "tree")
    n = 100_000
    write_csv(root / "big" / "Kimi-K2.csv", "id,score,metric_name\n" + "".join(f"x0,{k % 2},acc\n" for k in range(n)))
    db = tmp_path / "w.duckdb"
    result = run_pace("ingest", root, "--db", db, "--json")
    assert result.exit_code == 0, result
    assert len(result.stdout) < 20_000, len(result.stdout)
    runs = [a for a in json.loads(result.stdout)["anomalies"] if a["kind"] == "repeated_runs"]
    assert len(runs) == 1 and f"holds {n} runs over the same 1 ids" in runs[0]["message"], runs
    assert f"(+{n - EXAMPLES:,} more)" in runs[0]["message"], runs[0]["message"][:300]
    text = run_pace("ingest", root, "--db", tmp_path / "text.duckdb")
    assert text.exit_code == 0 and len(text.stdout) < 20_000, len(text.stdout)
    con = connect(db, read_only=True)                   # every mean stays queryable
    assert con.execute("SELECT len(run_means) FROM score_files WHERE model = 'Kimi-K2' AND benchmark = 'big'"
                       ).fetchone() == (n,)


def test_the_walk_never_leaves_the_tree_and_lists_what_it_skipped(tmp_path):
    root = tree(tmp_path / "tree")
    write_csv(tmp_path / "outside" / "alpha" / "Stolen.csv", rows(["q1", "q2"]))
    write_csv(tmp_path / "secret.csv", rows(["s1"]))
    os.symlink(tmp_path / "outside" / "alpha", root / "escape")                 # a benchmark folder outside
    os.symlink(tmp_path / "secret.csv", root / "alpha" / "Leaked.csv")           # a score file outside
    os.symlink("..", root / "beta" / "up")                                       # a loop inside the tree
    os.symlink("loop-b", root / "beta" / "loop-a")
    os.symlink("loop-a", root / "beta" / "loop-b")                               # links that never end
    (root / "alpha" / "Folder.csv").mkdir()                                      # a folder named like a file
    write_csv(root / "alpha" / "notes.txt", "not scores\n")
    con, report = _ingest(tmp_path, root)
    skipped = {a.where: a.message for a in report.anomalies if a.kind == "skipped_path"}
    assert set(skipped) == {"escape", "alpha/Leaked.csv", "beta/up", "beta/loop-a", "beta/loop-b",
                            "alpha/Folder.csv", "alpha/notes.txt"}
    assert "out of the tree" in skipped["escape"] and "folder above it" in skipped["beta/up"]
    assert "named like a score file" in skipped["alpha/Folder.csv"]
    assert con.execute("SELECT DISTINCT model FROM scores ORDER BY 1").fetchall() == [
        ("GLM-5",), ("Kimi-K2",), ("Nemotron-3-Nano",)]
    with pytest.raises(IngestError, match="strict=True"):
        ingest_tree(con, root, tmp_path / "lake", strict=True)
