"""`pace import inspect`: a real Inspect AI log, made here by running a tiny task against Inspect's
built-in mock model (no network), read with Inspect's own reader into scores, with the guarantees
of `pace ingest`. Skips, saying why, when inspect_ai (extra `inspect`; `make test` installs it) is absent."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from ingest.errors import IngestError
from ingest.harness import import_results
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import run_pace
from warehouse.connect import connect

pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (extra `inspect`; `make test` installs it)")

MAP = """
[tasks.tiny_qa]
benchmark = "src"
subdir = "leaf_b"
metric = "includes"
id = "metadata.qid"
"""


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    """Run a 3-sample task for 2 epochs on mockllm: y1 always right, y2 right in one epoch of two,
    y3 always wrong. Returns the log folder."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    calls: Counter = Counter()

    def answer(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        calls[prompt] += 1
        text = {"capital of y1?": "Paris", "capital of y3?": "Lyon",
                "capital of y2?": "Rome" if calls[prompt] == 1 else "Oslo"}[prompt]
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)     # no tokenizer download
        return out

    dataset = [Sample(input=f"capital of {q}?", target=t, id=f"s-{q}", metadata={"qid": q})
               for q, t in (("y1", "Paris"), ("y2", "Oslo"), ("y3", "Bern"))]
    folder = tmp_path_factory.mktemp("inspect") / "logs"
    (log,) = inspect_eval(Task(dataset=dataset, solver=generate(), scorer=includes(), name="tiny_qa"),
                          model=get_model("mockllm/model", custom_outputs=answer), epochs=2, log_dir=str(folder),
                          display="none")
    assert log.status == "success", log.error
    return folder


@pytest.fixture
def wh(tmp_path, small_tree):
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, small_tree, tmp_path / "lake")
    (tmp_path / "map.toml").write_text(MAP)
    return con


def test_a_real_log_becomes_score_rows_epochs_averaged(wh, inspect_log, tmp_path):
    report = import_results(wh, "inspect", inspect_log, tmp_path / "map.toml", lake=tmp_path / "lake", model="M3")
    assert (report.files, report.rows_written, report.source) == (1, 3, "inspect log")
    assert any("2 epochs per sample, averaged" in n for n in report.notes)
    assert wh.execute("""SELECT instance_id, score, metric_name FROM scores WHERE model = 'M3' ORDER BY 1""").fetchall() \
        == [("y1", 1.0, "includes"), ("y2", 0.5, "includes"), ("y3", 0.0, "includes")]
    path, layout, tree = wh.execute("SELECT path, layout, tree FROM score_files WHERE model = 'M3'").fetchone()
    assert path.endswith(".eval#src/leaf_b") and layout == "inspect log" and tree == str(inspect_log.resolve())
    # y3 is not among leaf_b's ids (y1, y2): reported, since a wrong `id` in the map looks the same
    assert [(a.kind, a.items) for a in report.anomalies] == [("unknown_ids", ["y3"])]
    assert lake_drift(wh, tmp_path / "lake") == {}
    again = import_results(wh, "inspect", inspect_log, tmp_path / "map.toml", lake=tmp_path / "lake", model="M3")
    assert (again.files_unchanged, again.rows_written) == (1, 0)


def test_the_model_is_the_logs_unless_told(wh, inspect_log, tmp_path):
    import_results(wh, "inspect", inspect_log, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert wh.execute("SELECT count(*) FROM scores WHERE model = 'mockllm/model'").fetchone()[0] == 3


def test_the_sample_id_can_be_the_key_and_a_missing_scorer_is_named(wh, inspect_log, tmp_path):
    (tmp_path / "map.toml").write_text(MAP.replace('id = "metadata.qid"', 'id = "id"'))
    import_results(wh, "inspect", inspect_log, tmp_path / "map.toml", lake=tmp_path / "lake", model="M3")
    assert [r[0] for r in wh.execute("SELECT instance_id FROM scores WHERE model = 'M3' ORDER BY 1").fetchall()] \
        == ["s-y1", "s-y2", "s-y3"]
    (tmp_path / "map.toml").write_text(MAP.replace('metric = "includes"', 'metric = "match"'))
    with pytest.raises(IngestError, match=r"no score 'match' \(scorers: includes\)"):
        import_results(wh, "inspect", inspect_log, tmp_path / "map.toml", lake=tmp_path / "lake", model="M3")


def test_a_broken_log_is_one_line_and_writes_nothing(wh, inspect_log, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(inspect_log, broken)
    (log,) = list(broken.glob("*.eval"))
    log.write_bytes(log.read_bytes()[:200])
    before = wh.execute("SELECT count(*) FROM scores").fetchone()[0]
    result = run_pace("import", "inspect", broken, "--map", tmp_path / "map.toml", "--db", tmp_path / "w.duckdb")
    assert result.exit_code == 2 and "not a readable Inspect log" in result.stderr, result
    assert len(result.stderr.strip().splitlines()) == 1 and str(log) in result.stderr
    assert wh.execute("SELECT count(*) FROM scores").fetchone()[0] == before


def test_the_command_line_json_report(tmp_path, inspect_log, small_tree):
    db = tmp_path / "cli.duckdb"
    assert run_pace("ingest", small_tree, "--db", db, "--no-progress").exit_code == 0
    (tmp_path / "map.toml").write_text(MAP)
    result = run_pace("import", "inspect", inspect_log, "--map", tmp_path / "map.toml", "--model", "M3",
                      "--db", db, "--json")
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    assert report["models"] == ["M3"] and report["anomaly_counts"] == {"unknown_ids": 1}
    strict = run_pace("import", "inspect", inspect_log, "--map", tmp_path / "map.toml", "--model", "M4",
                      "--db", db, "--strict")
    assert strict.exit_code == 2 and "--strict" in strict.stderr
