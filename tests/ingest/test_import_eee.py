"""Every Eval Ever: `pace export DIR --format eee` and `pace import eee DIR` (the round trip gives the
same score rows), files written by others (fields pace does not write), and the export's guarantees."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_pace, synthetic_warehouse
from warehouse import Warehouse
from warehouse.connect import connect
from ingest import score_store

ROWS = "SELECT model, benchmark, subdir, instance_id, score, metric_name FROM scores ORDER BY ALL"


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A small SYNTHETIC warehouse with a fit (so it has predictions) and one NULL score."""
    db, summary = synthetic_warehouse(tmp_path_factory.mktemp("eee"), n_models=5, seed=4, scale=0.05)
    con = connect(db)
    try:
        score_store.execute(con, "UPDATE scores SET score = NULL WHERE instance_id = (SELECT min(instance_id) FROM scores "
                    "WHERE benchmark = 'ifeval') AND benchmark = 'ifeval'")
    finally:
        con.close()
    Warehouse(db).fit(task="abs", sources="planbench,ifeval", count=8, intervals=False)
    return db


def _rows(db: Path):
    return Warehouse(db).sql(ROWS, output="tuples")[1]


def test_round_trip_gives_the_same_rows_and_never_imports_predictions(source, tmp_path):
    out = tmp_path / "eee"
    result = run_pace("export", out, "--format", "eee", "--db", source)
    assert result.exit_code == 0, result
    aggregates = sorted((out / "data").rglob("*.json"))
    first = json.loads(aggregates[0].read_text())
    assert first["schema_version"] == "0.2.1" and first["detailed_evaluation_results"]["hash_algorithm"] == "sha256"
    record = json.loads((out / first["detailed_evaluation_results"]["file_path"]).read_text().splitlines()[0])
    assert {"sample_id", "evaluation", "token_usage", "error", "evaluation_id"} <= set(record)
    assert record["evaluation_id"] == first["evaluation_id"]
    predictions = [json.loads(p.read_text()) for p in (out / "predictions").rglob("*.json")]
    assert predictions and all(p["source_metadata"]["additional_details"]["pace_kind"] == "prediction"
                               for p in predictions)
    interval = predictions[0]["evaluation_results"][0]["score_details"]["uncertainty"]
    assert "confidence_interval" in interval or interval == {}

    db = tmp_path / "back.duckdb"
    back = run_pace("import", "eee", out, "--db", db)
    assert back.exit_code == 0, back
    assert "pace predictions: not imported as scores" in back.output
    original = _rows(source)
    assert any(r[4] is None for r in original)
    assert _rows(db) == original
    again = run_pace("import", "eee", out, "--db", db, "--json")
    assert json.loads(again.stdout)["files_new"] == 0 and json.loads(again.stdout)["files_changed"] == 0


def test_a_model_known_by_its_metadata_alone_is_exported_as_an_anchors_prediction(source, tmp_path):
    """Its prediction (method anchors, from the population prior) has no source coverage: the export once
    stopped on it (TypeError formatting a NULL coverage), as on any warehouse with such an index model."""
    db = tmp_path / "pace.duckdb"
    shutil.copy(source, db)
    with Warehouse(db).connect(write=True) as con:
        con.execute("""INSERT INTO model_metadata (model, index_model, agent, source, release_date, output_price,
                                                   source_ref, recorded_at)
                       VALUES ('Newcomer-1', 'newcomer-1', 'openhands', 'openhands-index', DATE '2026-10-01', 3.0,
                               'synthetic', now())""")
        served = con.execute("SELECT method, coverage FROM predictions WHERE model = 'Newcomer-1'").fetchall()
    assert served and all(m == "anchors" and c is None for m, c in served)
    out = tmp_path / "eee"
    result = run_pace("export", out, "--format", "eee", "--db", db)
    assert result.exit_code == 0, result
    [agg] = [json.loads(p.read_text()) for p in (out / "predictions").rglob("*.json")
             if json.loads(p.read_text())["model_info"]["name"] == "Newcomer-1"]
    assert len(agg["evaluation_results"]) == len(served)
    for r in agg["evaluation_results"]:
        details = r["metric_config"]["additional_details"]
        assert details["pace_method"] == "anchors" and "pace_coverage" not in details
        assert "anchors" in r["score_details"]["uncertainty"]["confidence_interval"]["method"]
    others = [json.loads(p.read_text()) for p in (out / "predictions").rglob("*.json")]
    assert all("pace_coverage" in r["metric_config"]["additional_details"] for a in others
               if a["model_info"]["name"] != "Newcomer-1" for r in a["evaluation_results"])


def test_export_keeps_its_guarantees(source, tmp_path):
    out = tmp_path / "eee"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    refused = run_pace("export", out, "--format", "eee", "--db", source)
    assert refused.exit_code == 2 and "not empty" in refused.stderr
    assert run_pace("export", out, "--format", "eee", "--db", source, "--overwrite").exit_code == 0
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert run_pace("export", out, "--format", "eee", "--db", source, "--overwrite").exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == names   # same names
    assert (out / "mine.txt").read_text() == "keep me"
    assert not list(out.glob(".pace-staging-*"))
    assert run_pace("export", out, "--format", "xml", "--db", source).exit_code == 2


def _others(folder: Path, *, checksum: bool = True) -> Path:
    """An aggregate and its records as another tool writes them, with fields pace never writes."""
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for i, (correct, error) in enumerate([(True, None), (False, None), (True, "timeout after 60 s")]):
        records.append({
            "schema_version": "0.2.1", "evaluation_id": "gsm8k/acme/Acme-7B/1707000000", "model_id": "acme/Acme-7B",
            "evaluation_name": "GSM8K", "evaluation_result_id": "r-gsm8k", "sample_id": f"gsm8k_{i:04d}",
            "sample_hash": hashlib.sha256(str(i).encode()).hexdigest(), "interaction_type": "single_turn",
            "input": {"raw": f"What is {i}+{i}?", "formatted": f"Q: What is {i}+{i}?\nA:", "reference": [str(2 * i)],
                      "choices": None},
            "output": {"raw": [str(2 * i) if correct else "7"], "reasoning_trace": None}, "messages": None,
            "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": str(2 * i),
                                    "extraction_method": "regex", "is_terminal": True}],
            "evaluation": {"score": 1.0 if correct else 0.0, "is_correct": correct, "num_turns": 1},
            "token_usage": {"input_tokens": 20, "output_tokens": 3, "total_tokens": 23, "reasoning_tokens": None},
            "performance": {"latency_ms": 120.5}, "error": error, "metadata": {"subject": "arithmetic"}})
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    (folder / "0b6b1c1e-aaaa-4bbb-8ccc-000000000001_samples.jsonl").write_bytes(body)
    aggregate = {
        "schema_version": "0.2.1", "evaluation_id": "gsm8k/acme/Acme-7B/1707000000",
        "retrieved_timestamp": "1707000000", "evaluation_timestamp": "2024-02-03T10:00:00Z",
        "source_metadata": {"source_name": "Acme evals", "source_type": "evaluation_run",
                            "source_organization_name": "Acme", "evaluator_relationship": "first_party"},
        "model_info": {"name": "Acme-7B", "id": "acme/Acme-7B", "developer": "Acme",
                       "inference_engine": {"name": "vLLM", "version": "0.6.0"}},
        "eval_library": {"name": "lm_eval", "version": "0.4.5"},
        "evaluation_results": [{
            "evaluation_name": "GSM8K", "evaluation_result_id": "r-gsm8k",
            "source_data": {"dataset_name": "gsm8k", "source_type": "hf_dataset", "hf_repo": "openai/gsm8k",
                            "hf_split": "test", "samples_number": 3},
            "metric_config": {"lower_is_better": False, "score_type": "binary", "metric_name": "exact_match"},
            "score_details": {"score": 0.5, "uncertainty": {"standard_error": {"value": 0.29}, "num_samples": 2}},
            "generation_config": {"generation_args": {"temperature": 0.0, "max_tokens": 256}}}],
        "detailed_evaluation_results": {
            "format": "jsonl", "file_path": "data/gsm8k/acme/Acme-7B/0b6b1c1e-aaaa-4bbb-8ccc-000000000001_samples.jsonl",
            "hash_algorithm": "sha256", "checksum": hashlib.sha256(body).hexdigest() if checksum else "0" * 64,
            "total_rows": 3}}
    (folder / "0b6b1c1e-aaaa-4bbb-8ccc-000000000001.json").write_text(json.dumps(aggregate))
    summary_only = dict(aggregate, evaluation_id="mmlu/acme/Acme-7B/1", detailed_evaluation_results=None)
    (folder / "0b6b1c1e-aaaa-4bbb-8ccc-000000000002.json").write_text(json.dumps(summary_only))
    return folder


def test_files_written_by_others(tmp_path):
    root = tmp_path / "datastore"
    _others(root / "data" / "gsm8k" / "acme" / "Acme-7B")
    db = tmp_path / "w.duckdb"
    result = run_pace("import", "eee", root, "--db", db)
    assert result.exit_code == 0, result
    assert "aggregate without per-instance records" in result.output
    assert _rows(db) == [("Acme-7B", "GSM8K", "", "gsm8k_0000", 1.0, "exact_match"),
                         ("Acme-7B", "GSM8K", "", "gsm8k_0001", 0.0, "exact_match"),
                         ("Acme-7B", "GSM8K", "", "gsm8k_0002", None, "exact_match")]       # errored: NULL, not 0
    (tmp_path / "map.toml").write_text('[tasks.GSM8K]\nbenchmark = "gsm8k"\nsubdir = "main"\nmetric = "is_correct"\n'
                                       'id = "metadata.subject"\n')
    mapped = run_pace("import", "eee", root, "--map", tmp_path / "map.toml", "--db", tmp_path / "m.duckdb",
                      "--model", "Acme", "--duplicates", "last")
    assert mapped.exit_code == 0, mapped
    assert _rows(tmp_path / "m.duckdb") == [("Acme", "gsm8k", "main", "arithmetic", None, "is_correct")]


def test_a_changed_records_file_is_refused(tmp_path):
    root = tmp_path / "ds"
    _others(root, checksum=False)
    result = run_pace("import", "eee", root, "--db", tmp_path / "w.duckdb")
    assert result.exit_code == 2 and "differs from the aggregate's checksum" in result.stderr
    assert not (tmp_path / "w.duckdb").exists()
    other = _others(tmp_path / "ds2")
    (other / "garbage.json").write_text("{not json")
    result = run_pace("import", "eee", other, "--db", tmp_path / "w.duckdb")
    assert result.exit_code == 2 and "not valid JSON" in result.stderr
