"""`pace import lm-eval`: lm-evaluation-harness samples files (the fields --log_samples writes) into
scores, with the guarantees of `pace ingest`: idempotent, all or nothing with file:line errors,
anomalies reported, the lake in step, provenance recorded."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest

from ingest.errors import IngestError
from ingest.harness import import_results
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import run_pace
from warehouse.connect import connect
from ingest import score_store

TIME = "2025-03-04T10-11-12.123456"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
MAP = """
[tasks.mmlu_sub]
benchmark = "src"
subdir = "leaf_a"
metric = "acc"
id = "doc.qid"

[tasks.ifeval]
benchmark = "ifeval"
id = "doc_id"
metric = { prompt_level_strict_acc = "prompt_level_strict_acc", inst_level_strict_acc = "inst_level_strict_acc" }
"""


def sample(doc_id: int, doc: dict, metrics: dict, flt: str = "none") -> dict:
    """One line as lm-eval --log_samples writes it (a loglikelihood task's shapes)."""
    line = {"doc_id": doc_id, "doc": doc, "target": doc.get("answer", 0),
            "arguments": {"gen_args_0": {"arg_0": "Question: ...", "arg_1": " A"}},
            "resps": [[["-0.5", "True"]]], "filtered_resps": [["-0.5", "True"]], "filter": flt,
            "metrics": list(metrics), "doc_hash": "d" * 64, "prompt_hash": "p" * 64, "target_hash": "t" * 64}
    line.update(metrics)
    return line


def write_run(out: Path, task: str, lines: list[dict], model: str | None = MODEL, time: str = TIME) -> Path:
    folder = out / (model or "unknown").replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    if model:
        (folder / f"results_{time}.json").write_text(json.dumps(
            {"results": {task: {}}, "model_name": model, "config": {"model": "hf", "model_args": f"pretrained={model}"}}))
    path = folder / f"samples_{task}_{time}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture
def lm_run(tmp_path) -> Path:
    out = tmp_path / "lm_out"
    write_run(out, "mmlu_sub", [sample(0, {"qid": "x1", "question": "?", "answer": 0}, {"acc": 1.0}),
                                sample(1, {"qid": "x2", "question": "?", "answer": 2}, {"acc": 0.0})])
    write_run(out, "ifeval", [sample(i, {"key": 1000 + i, "prompt": "write"},
                                     {"prompt_level_strict_acc": i != 1,
                                      "inst_level_strict_acc": [True, False, True][: i + 1]}) for i in range(3)])
    write_run(out, "arc_easy", [sample(0, {"id": "Mercury_1"}, {"acc": 1.0})])       # not in the map
    (tmp_path / "map.toml").write_text(MAP)
    return out


@pytest.fixture
def wh(tmp_path, small_tree):
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, small_tree, tmp_path / "lake")
    return con


def _state(con, lake: Path):
    rows = con.execute("SELECT * FROM scores ORDER BY ALL").fetchall()
    files = con.execute("SELECT path, sha256, n_rows FROM score_files ORDER BY ALL").fetchall()
    parts = sorted((p.relative_to(lake).as_posix(), p.read_bytes()) for p in lake.rglob("*.parquet"))
    return rows, files, parts


def test_samples_become_score_rows_with_provenance_and_the_lake_in_step(wh, lm_run, tmp_path):
    report = import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert (report.files, report.files_new, report.rows_written) == (3, 3, 8)
    assert any("arc_easy (1 file)" in n for n in report.notes)
    rows = wh.execute("""SELECT benchmark, subdir, instance_id, score, metric_name FROM scores
                         WHERE model = ? ORDER BY ALL""", [MODEL]).fetchall()
    assert rows == [("ifeval", "inst_level_strict_acc", "0", 1.0, "inst_level_strict_acc"),
                    ("ifeval", "inst_level_strict_acc", "1", 0.5, "inst_level_strict_acc"),
                    ("ifeval", "inst_level_strict_acc", "2", pytest.approx(2 / 3), "inst_level_strict_acc"),
                    ("ifeval", "prompt_level_strict_acc", "0", 1.0, "prompt_level_strict_acc"),
                    ("ifeval", "prompt_level_strict_acc", "1", 0.0, "prompt_level_strict_acc"),
                    ("ifeval", "prompt_level_strict_acc", "2", 1.0, "prompt_level_strict_acc"),
                    ("src", "leaf_a", "x1", 1.0, "acc"), ("src", "leaf_a", "x2", 0.0, "acc")]
    sample_file = lm_run / "Qwen__Qwen2.5-0.5B-Instruct" / f"samples_mmlu_sub_{TIME}.jsonl"
    path, sha, tree, layout, mapping = wh.execute("""SELECT path, sha256, tree, layout, mapping FROM score_files
                                                     WHERE benchmark = 'src' AND model = ?""", [MODEL]).fetchone()
    assert path == f"Qwen__Qwen2.5-0.5B-Instruct/samples_mmlu_sub_{TIME}.jsonl#src/leaf_a"
    assert sha == hashlib.sha256(sample_file.read_bytes()).hexdigest() and tree == str(lm_run.resolve())
    assert layout == "lm-eval samples" and json.loads(mapping)["id"] == "doc.qid"
    assert lake_drift(wh, tmp_path / "lake") == {}
    assert not report.anomalies, report.anomalies


def test_a_second_import_is_a_no_op_and_a_changed_map_rereads(wh, lm_run, tmp_path):
    import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    before = _state(wh, tmp_path / "lake")
    again = import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert (again.files_unchanged, again.rows_written, again.rows_removed) == (3, 0, 0)
    assert _state(wh, tmp_path / "lake") == before
    (tmp_path / "map.toml").write_text(MAP.replace('subdir = "leaf_a"', 'subdir = "leaf_a"\nfilter = "none"'))
    changed = import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert (changed.files_changed, changed.files_unchanged, changed.rows_written, changed.rows_removed) == (1, 2, 2, 2)
    assert lake_drift(wh, tmp_path / "lake") == {}


@pytest.mark.parametrize("bad_line, needle", [
    ("{not json", ":2: not a JSON line"),
    (json.dumps(sample(1, {"qid": "x2"}, {"accuracy": 1.0})), ":2: no metric 'acc' on this line (metrics: accuracy)"),
    (json.dumps(sample(1, {"question": "?"}, {"acc": 1.0})), ":2: no field 'doc.qid' on this line"),
    (json.dumps(sample(1, {"qid": ""}, {"acc": 1.0})), ":2: doc.qid '' is not usable as an instance id"),
    (json.dumps(sample(1, {"qid": "x2"}, {"acc": ["the reference", "the prediction"]})),
     ":2: metric 'acc' is not a per-sample score"),
    (json.dumps({"unrelated": 1}), ":2: not an lm-eval sample"),
])
def test_a_bad_line_names_file_and_line_and_writes_nothing(wh, lm_run, tmp_path, bad_line, needle):
    import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")     # a first, good import
    before = _state(wh, tmp_path / "lake")
    path = lm_run / "Qwen__Qwen2.5-0.5B-Instruct" / f"samples_mmlu_sub_{TIME}.jsonl"
    first = path.read_text().splitlines()[0]
    path.write_text(first + "\n" + bad_line + "\n")
    with pytest.raises(IngestError) as err:
        import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert str(err.value).startswith(str(path)) and needle in str(err.value), str(err.value)
    assert _state(wh, tmp_path / "lake") == before


def test_filters_must_be_chosen_and_the_chosen_one_is_kept(wh, tmp_path):
    out = tmp_path / "gsm"
    write_run(out, "gsm8k", [sample(i, {"q": i}, {"exact_match": float(i == 0 and f == "strict-match" or f == "flex")},
                                    flt=f) for i in range(2) for f in ("strict-match", "flex")])
    (tmp_path / "m.toml").write_text('[tasks.gsm8k]\nbenchmark = "gsm8k"\nmetric = "exact_match"\n')
    with pytest.raises(IngestError, match="filters flex, strict-match: choose one"):
        import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake")
    (tmp_path / "m.toml").write_text('[tasks.gsm8k]\nbenchmark = "gsm8k"\nmetric = "exact_match"\n'
                                     'filter = "strict-match"\n')
    import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake")
    assert wh.execute("SELECT instance_id, score, metric_name FROM scores WHERE benchmark = 'gsm8k' ORDER BY 1"
                      ).fetchall() == [("0", 1.0, "exact_match,strict-match"), ("1", 0.0, "exact_match,strict-match")]


def test_ids_that_the_leaf_does_not_know_are_reported_and_strict_refuses(wh, tmp_path):
    out = tmp_path / "wrong_ids"
    write_run(out, "mmlu_sub", [sample(0, {"qid": "x1"}, {"acc": 1.0}), sample(1, {"qid": "x2"}, {"acc": 0.0})])
    (tmp_path / "m.toml").write_text('[tasks.mmlu_sub]\nbenchmark = "src"\nsubdir = "leaf_a"\nmetric = "acc"\n')
    before = _state(wh, tmp_path / "lake")
    with pytest.raises(IngestError, match="strict=True: 1 anomalies"):
        import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake", strict=True)
    assert _state(wh, tmp_path / "lake") == before
    report = import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake")
    (anomaly,) = report.anomalies
    assert anomaly.kind == "unknown_ids" and anomaly.where == "src/leaf_a" and anomaly.items == ["0", "1"]
    assert "check `id` in the map" in anomaly.message


def test_the_model_comes_from_the_flag_the_map_or_the_results_file(wh, tmp_path):
    out = tmp_path / "anon"
    write_run(out, "mmlu_sub", [sample(0, {"qid": "x1"}, {"acc": 1.0})], model=None)
    (tmp_path / "m.toml").write_text(MAP)
    with pytest.raises(IngestError, match="cannot tell which model.*model=NAME"):
        import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake")
    import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake", model="M3")
    (tmp_path / "m.toml").write_text('model = "M4"\n' + MAP)
    import_results(wh, "lm-eval", out, tmp_path / "m.toml", lake=tmp_path / "lake")
    assert wh.execute("SELECT DISTINCT model FROM scores WHERE benchmark = 'src' AND subdir = 'leaf_a' "
                      "ORDER BY 1").fetchall() == [("M1",), ("M2",), ("M4",)]      # M4's file replaced M3's


def test_the_same_rows_from_two_sources_are_refused(wh, lm_run, tmp_path):
    """The harness says M1 scored leaf_a, but M1's leaf_a CSV is already ingested: one score, two sources."""
    before = _state(wh, tmp_path / "lake")
    with pytest.raises(IngestError, match="same model, leaf and ids as rows already ingested from src/leaf_a/M1.csv"):
        import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake", model="M1")
    assert _state(wh, tmp_path / "lake") == before


@pytest.mark.parametrize("text, needle", [
    ('[tasks.mmlu_sub]\nbenchmark = "src"\nmetirc = "acc"\n', "map.toml:1: [tasks.mmlu_sub]: unknown key(s) metirc"),
    ('[tasks.mmlu_sub]\nmetric = "acc"\n', "missing `benchmark`"),
    ('\n\n[tasks.a]\nbenchmark = "src/x"\nmetric = "acc"\n', "map.toml:3: [tasks.a]: benchmark 'src/x' must be"),
    ('[tasks.a]\nbenchmark = "src"\nmetric = "acc"\nid = "question_id"\n', "id 'question_id' must be 'doc_id' or doc.<field>"),
    ('[tasks.a]\nbenchmark = "src"\nmetric = "acc"\nscore_key = "x"\n', "unknown key(s) score_key for `pace import lm-eval`"),
    ('[tasks.a\nbenchmark = "src"\n', "map.toml:1: not valid TOML"),
    ('model = "x"\n', "no [tasks.<task>] table"),
])
def test_a_bad_map_is_one_line_naming_the_map_and_its_line(tmp_path, lm_run, text, needle):
    (tmp_path / "map.toml").write_text(text)
    result = run_pace("import", "lm-eval", lm_run, "--map", tmp_path / "map.toml", "--db", tmp_path / "new.duckdb")
    assert result.exit_code == 2 and needle in result.stderr, result
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "new.duckdb").exists()            # a bad map fails before a warehouse is created


def test_a_bad_file_fails_before_a_warehouse_is_created(tmp_path, lm_run):
    path = next(lm_run.rglob("samples_ifeval_*.jsonl"))
    path.write_text(path.read_text() + "{broken\n")
    result = run_pace("import", "lm-eval", lm_run, "--map", tmp_path / "map.toml", "--db", tmp_path / "new.duckdb")
    assert result.exit_code == 2 and f"{path}:4: not a JSON line" in result.stderr, result
    assert not (tmp_path / "new.duckdb").exists()


def test_the_command_line(tmp_path, lm_run, small_tree):
    db = tmp_path / "cli.duckdb"
    assert run_pace("ingest", small_tree, "--db", db, "--no-progress").exit_code == 0
    result = run_pace("import", "lm-eval", lm_run, "--map", tmp_path / "map.toml", "--db", db, "--json")
    assert result.exit_code == 0, result
    report = json.loads(result.stdout)
    assert report["source"] == "lm-eval samples" and report["rows_written"] == 8 and report["models"] == [MODEL]
    text = run_pace("import", "lm-eval", lm_run, "--map", tmp_path / "map.toml", "--db", db)
    assert "Imported" in text.stdout and "3 unchanged" in text.stdout, text
    missing = run_pace("import", "lm-eval", tmp_path / "nowhere", "--map", tmp_path / "map.toml", "--db", db)
    assert missing.exit_code == 2 and "nowhere: no such file or folder" in missing.stderr
    typo = run_pace("import", "lm-eval", lm_run, "--mapp", tmp_path / "map.toml", "--db", db)
    assert typo.exit_code == 2 and "--mapp" in typo.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM scores WHERE model = ?", [MODEL]).fetchone()[0] == 8


def test_a_synthetic_warehouse_refuses_real_imports(tmp_path, lm_run):
    from ingest.synthetic import generate_tree

    generate_tree(tmp_path / "syn", n_models=3, seed=0, scale=0.05)
    con = connect(tmp_path / "s.duckdb")
    ingest_tree(con, tmp_path / "syn", tmp_path / "slake")
    with pytest.raises(IngestError, match="refusing to mix"):
        import_results(con, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "slake")



def test_inspect_logs_without_inspect_ai_are_refused_naming_the_extra(tmp_path, monkeypatch):
    """(Here, not in test_import_inspect.py, which is skipped when inspect_ai is absent.)"""
    from ingest import inspect_log

    monkeypatch.setattr(inspect_log, "log_reader", lambda: None)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.eval").write_bytes(b"PK\x03\x04")
    (tmp_path / "m.toml").write_text('[tasks.t]\nbenchmark = "b"\nmetric = "match"\n')
    result = run_pace("import", "inspect", tmp_path / "logs", "--map", tmp_path / "m.toml",
                      "--db", tmp_path / "w.duckdb")
    assert result.exit_code == 2 and "pip install 'pace-warehouse[inspect]'" in result.stderr, result
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "w.duckdb").exists()


def test_the_readmes_example_maps_are_valid(tmp_path):
    import re

    from ingest.harness_map import load_map
    from tests.conftest import REPO

    blocks = re.findall(r"```toml\n(# (\S+)\.toml:.*?)```", (REPO / "README.md").read_text(), re.S)
    assert sorted(kind for _, kind in blocks) == ["helm", "inspect", "lm-eval"]
    for text, kind in blocks:
        (tmp_path / f"{kind}.toml").write_text(text)
        assert load_map(tmp_path / f"{kind}.toml", kind).tasks


def test_rows_deleted_by_hand_are_named_by_doctor_and_reloaded_by_the_import(wh, lm_run, tmp_path):
    from warehouse.doctor import run_doctor

    import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    score_store.execute(wh, "DELETE FROM scores WHERE benchmark = 'ifeval' AND instance_id = '1'")
    report = run_doctor(wh, repair=False, scan=True)          # deleted by another client: a scan sees it
    assert any(f"`pace import lm-eval {lm_run.resolve()} --map MAP` reloads them" in p for p in report["problems"])
    repair = run_doctor(wh, repair=True, scan=True, lake=tmp_path / "lake")   # left for the user: exit 1 (was 0)
    assert any("reloads them" in p for p in repair["unrepaired"]), repair
    again = import_results(wh, "lm-eval", lm_run, tmp_path / "map.toml", lake=tmp_path / "lake")
    assert (again.files_reloaded, again.rows_written) == (2, 6)
    assert wh.execute("SELECT count(*) FROM scores WHERE model = ?", [MODEL]).fetchone()[0] == 8
