"""`pace import helm`: HELM run folders built by hand in the layout helm-run writes (run_spec.json,
per_instance_stats.json, scenario_state.json), into scores with the guarantees of `pace ingest`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.lake import lake_drift
from tests.helpers import run_pace
from warehouse.connect import connect

MAP = """
[tasks.mmlu]
benchmark = "mmlu_helm"
subdir = "{subject}"
metric = "exact_match"
"""


def stat(name: str, value: float, split: str = "test", **extra) -> dict:
    """One statistic as HELM writes it: a MetricName and the running aggregates."""
    return {"name": {"name": name, "split": split, **extra}, "count": 1, "sum": value, "sum_squared": value * value,
            "min": value, "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


def write_run(runs: Path, subject: str, per_instance: list[dict], ids: list[str], model: str = "openai/gpt2") -> Path:
    folder = runs / f"mmlu:subject={subject},method=multiple_choice_joint,model={model.replace('/', '_')}"
    folder.mkdir(parents=True)
    (folder / "run_spec.json").write_text(json.dumps({
        "name": folder.name, "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                                               "args": {"subject": subject}},
        "adapter_spec": {"method": "multiple_choice_joint", "model": model, "max_train_instances": 5},
        "metric_specs": [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicMetric", "args": {}}],
        "groups": ["mmlu"]}))
    (folder / "per_instance_stats.json").write_text(json.dumps(per_instance))
    (folder / "scenario_state.json").write_text(json.dumps({
        "adapter_spec": {"model": model},
        "request_states": [{"instance": {"input": {"text": f"question {i}"}, "references": [], "split": "test",
                                         "id": i, "extra_data": {"qid": f"q-{i}"}},
                            "train_trial_index": 0, "output_mapping": None, "request": {}, "result": {}}
                           for i in ids]}))
    return folder


@pytest.fixture
def runs(tmp_path) -> Path:
    runs = tmp_path / "benchmark_output" / "runs" / "v1"
    write_run(runs, "anatomy", [
        {"instance_id": "id1", "train_trial_index": 0, "stats": [stat("exact_match", 1.0), stat("num_tokens", 9),
                                                                 stat("exact_match", 0.0, "valid")]},
        {"instance_id": "id1", "train_trial_index": 1, "stats": [stat("exact_match", 0.0)]},      # a second trial
        {"instance_id": "id2", "train_trial_index": 0, "stats": [stat("exact_match", 0.0)]},
        {"instance_id": "id2", "train_trial_index": 0, "perturbation": {"name": "typos"},           # not the instance
         "stats": [stat("exact_match", 1.0, perturbation={"name": "typos"})]},
    ], ids=["id1", "id2", "id3"])                                   # id3: no statistic (a failed request)
    write_run(runs, "astronomy", [{"instance_id": "id1", "train_trial_index": 0, "stats": [stat("exact_match", 1.0)]}],
              ids=["id1"])
    (tmp_path / "helm.toml").write_text(MAP)
    return runs


def _rows(db: Path):
    con = connect(db, read_only=True)
    try:
        return con.execute("SELECT model, benchmark, subdir, instance_id, score, metric_name FROM scores "
                           "ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_helm_runs_become_rows(runs, tmp_path):
    db = tmp_path / "w.duckdb"
    result = run_pace("import", "helm", runs.parent.parent, "--map", tmp_path / "helm.toml", "--db", db)
    assert result.exit_code == 0, result
    assert "without exact_match" in result.output and "2 train trials" in result.output
    assert _rows(db) == [
        ("openai/gpt2", "mmlu_helm", "anatomy", "id1", 0.5, "exact_match,test"),       # two trials averaged
        ("openai/gpt2", "mmlu_helm", "anatomy", "id2", 0.0, "exact_match,test"),       # perturbed copy left out
        ("openai/gpt2", "mmlu_helm", "anatomy", "id3", None, "exact_match,test"),      # no statistic: NULL, not 0
        ("openai/gpt2", "mmlu_helm", "astronomy", "id1", 1.0, "exact_match,test")]
    con = connect(db, read_only=True)
    try:
        files = con.execute("SELECT path, layout, mapping FROM score_files ORDER BY path").fetchall()
        assert lake_drift(con, content=True) == {}
    finally:
        con.close()
    assert [f[1] for f in files] == ["helm run", "helm run"]
    assert files[0][0].endswith("per_instance_stats.json#mmlu_helm/anatomy")
    assert json.loads(files[0][2])["split"] == "test"
    again = run_pace("import", "helm", runs.parent.parent, "--map", tmp_path / "helm.toml", "--db", db, "--json")
    assert json.loads(again.stdout)["files_unchanged"] == 2


def test_helm_ids_from_the_scenario_state_and_model_flag(runs, tmp_path):
    (tmp_path / "ids.toml").write_text(MAP + 'id = "instance.extra_data.qid"\n')
    db = tmp_path / "w.duckdb"
    result = run_pace("import", "helm", runs, "--map", tmp_path / "ids.toml", "--model", "GPT-2", "--db", db)
    assert result.exit_code == 0, result
    assert {(r[0], r[3]) for r in _rows(db)} == {("GPT-2", "q-id1"), ("GPT-2", "q-id2"), ("GPT-2", "q-id3")}


@pytest.mark.parametrize("change, message", [
    (lambda runs, tmp: (tmp / "helm.toml").write_text(MAP.replace("exact_match", "f1_score")),
     "no statistic 'f1_score' on split 'test' (statistics here: exact_match (test), exact_match (valid)"),
    (lambda runs, tmp: (tmp / "helm.toml").write_text(MAP.replace("{subject}", "{dataset}")),
     "subdir '{dataset}' names 'dataset'"),
    (lambda runs, tmp: next(runs.glob("mmlu:subject=astronomy*")).joinpath("per_instance_stats.json")
     .write_text("[{\"instance_id\": "), "not valid JSON"),
    (lambda runs, tmp: next(runs.glob("mmlu:subject=astronomy*")).joinpath("run_spec.json").unlink(),
     "no run_spec.json beside it"),
])
def test_bad_runs_write_nothing(runs, tmp_path, change, message):
    db = tmp_path / "w.duckdb"
    change(runs, tmp_path)
    result = run_pace("import", "helm", runs, "--map", tmp_path / "helm.toml", "--db", db)
    assert result.exit_code == 2 and message in result.stderr, result
    assert not db.exists() or _rows(db) == []


def test_changed_run_replaces_exactly_its_rows(runs, tmp_path):
    db = tmp_path / "w.duckdb"
    assert run_pace("import", "helm", runs, "--map", tmp_path / "helm.toml", "--db", db).exit_code == 0
    astro = next(runs.glob("mmlu:subject=astronomy*")) / "per_instance_stats.json"
    astro.write_text(json.dumps([{"instance_id": "id1", "train_trial_index": 0, "stats": [stat("exact_match", 0.0)]}]))
    result = run_pace("import", "helm", runs, "--map", tmp_path / "helm.toml", "--db", db, "--json")
    assert json.loads(result.stdout)["files_changed"] == 1
    assert [r for r in _rows(db) if r[2] == "astronomy"] == [
        ("openai/gpt2", "mmlu_helm", "astronomy", "id1", 0.0, "exact_match,test")]
    assert len(_rows(db)) == 4
