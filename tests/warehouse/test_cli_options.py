"""Options as a stranger types them: options a method ignores are refused naming the method, lists
space-separated as the published CLI takes them, PACE_* environment variables, bad values in one line."""
from __future__ import annotations

import json

import duckdb
import pytest

from ingest.synthetic import generate_tree
from tests.helpers import run_pace
from warehouse import settings
from warehouse.api import Warehouse


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli_options")
    generate_tree(tmp / "tree", n_models=6, seed=2, scale=0.1)
    path = tmp / "pace.duckdb"
    Warehouse(path).ingest(tmp / "tree")
    return path


def _one_line(result, *fragments):
    assert result.exit_code == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.mark.parametrize("args, fragments", [
    (["loocv", "abs", "--q", "0.5"], ["--method default does not use --q", "default reads --count, --seed"]),
    (["loocv", "abs", "--B", "5"], ["--method default does not use --B"]),
    (["loocv", "abs", "--missing", "zero", "--auto-tune"], ["--method default does not use --auto-tune, --missing"]),
    (["loocv", "abs", "--fit-all"], ["--method default does not use --fit-all"]),
    (["loocv", "abs", "--method", "mean", "--count", "5"], ["--method mean does not use --count"]),
    (["loocv", "abs", "--method", "bench-ridge", "--seed", "3"], ["--method bench-ridge does not use --seed"]),
    (["loocv", "abs", "--method", "instance", "--nc-h", "2"], ["--method instance does not use --nc-h"]),
    (["loocv", "abs", "--method", "compat", "--strict-budget", "--nc-max", "3"],
     ["--method compat (frozen configurations) does not use --nc-max"]),
    (["loocv", "abs", "--method", "compat", "--strict-budget", "--auto-tune", "--m", "0.5"],
     ["--method compat with --auto-tune does not use --m"]),
    (["loocv", "pair", "--m", "0.3", "--strict-budget"], ["--method default does not use --strict-budget, --m",
                                                          "(pace loocv pair)"]),
    (["fit", "--task", "abs", "--B", "5"], ["--method default does not use --B for --task abs"]),
    (["sweep", "--methods", "mean,default", "--B", "5"], ["none of --methods mean,default uses --B"]),
    (["sweep", "--methods", "mean", "--counts", "10,20"], ["none of --methods mean uses --counts"]),
])
def test_an_option_the_method_ignores_is_refused_naming_the_method(db, args, fragments):
    def stored():
        with duckdb.connect(str(db), read_only=True) as con:
            return con.execute("SELECT (SELECT count(*) FROM loocv_runs), (SELECT count(*) FROM proxy_fits)").fetchone()

    before = stored()
    out = ["--out", db.parent / "never"] if args[0] == "loocv" else []
    _one_line(run_pace(*args, "--db", db, *out), *fragments)
    assert not (db.parent / "never").exists() and stored() == before


def test_space_separated_lists_equal_commas_and_repetition(db, tmp_path):
    runs = []
    for i, lists in enumerate((["--sources", "planbench", "ifeval", "--targets", "gaia", "swtbench"],
                               ["--sources", "planbench,ifeval", "--targets", "gaia,swtbench"],
                               ["--sources", "planbench", "--sources", "ifeval", "--targets=gaia", "swtbench"])):
        result = run_pace("loocv", "abs", "--method", "mean", *lists, "--db", db, "--out", tmp_path / str(i),
                          "--json")
        assert result.exit_code == 0, result
        runs.append(json.loads(result.stdout)["run_id"])
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT sources, targets FROM loocv_runs WHERE run_id IN (SELECT unnest(?)) ",
                          [runs]).fetchall()
    assert got == [(["planbench", "ifeval"], ["gaia", "swtbench"])] * 3
    sweep = run_pace("sweep", "--methods", "mean,random-c", "--counts", "10", "--sources", "planbench", "ifeval",
                     "--db", db, "--out", tmp_path / "sweep", "--json")
    assert sweep.exit_code == 0, sweep
    sweep_runs = [r["run_id"] for r in json.loads(sweep.stdout)["results"]]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT list(DISTINCT sources) FROM loocv_runs WHERE run_id IN (SELECT unnest(?))",
                           [sweep_runs]).fetchone()[0] == [["planbench", "ifeval"]]
    # a bare word is only ever a list value: anything else is still refused
    _one_line(run_pace("loocv", "abs", "--method", "mean", "--sources", "planbench", "nosuch", "--db", db,
                       "--out", tmp_path / "x"), "--sources: no benchmark 'nosuch'")
    _one_line(run_pace("loocv", "abs", "--method", "mean", "--sourcs", "planbench", "--db", db), "--sourcs")


def test_environment_variables_set_the_main_options(db, tmp_path):
    env = {"PACE_SOURCES": "planbench ifeval", "PACE_TARGETS": "gaia,swebench", "PACE_METHOD": "mean",
           "PACE_COUNT": "5", "PACE_DB": str(db)}
    result = run_pace("loocv", "abs", "--out", tmp_path / "env", "--json", env=env)
    assert result.exit_code == 0, result          # PACE_COUNT is left out for mean, which reads no budget
    run_id = json.loads(result.stdout)["run_id"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT method, sources, targets FROM loocv_runs WHERE run_id = ?", [run_id]).fetchall() \
            == [("mean", ["planbench", "ifeval"], ["gaia", "swebench"])]
    # ... while the same option typed on the line is refused, and a flag wins over the variable
    _one_line(run_pace("loocv", "abs", "--count", "5", "--out", tmp_path / "e2", env=env), "does not use --count")
    help_text = run_pace("loocv", "abs", "--help").stdout
    for var in ("PACE_COUNT", "PACE_B", "PACE_SEED", "PACE_SOURCES", "PACE_TARGETS", "PACE_METHOD", "PACE_SPLIT",
                "PACE_DB"):
        assert var in help_text, var


@pytest.mark.parametrize("env, fragments", [
    ({"PACE_COUNT": "abc"}, ["PACE_COUNT", "'abc'"]),
    ({"PACE_COUNT": "0"}, ["--count must be an integer >= 1, not 0", "PACE_COUNT='0'"]),
    ({"PACE_B": "-2", "PACE_METHOD": "instance"}, ["--B", "PACE_B='-2'"]),
    ({"PACE_METHOD": "magic"}, ["--method 'magic' is not one of", "PACE_METHOD='magic'"]),
    ({"PACE_SPLIT": "lo"}, ["--split 'lo'", "PACE_SPLIT='lo'"]),
    ({"PACE_JOBS": "0"}, ["PACE_JOBS='0' is not a positive integer"]),
    ({"PACE_JOBS": "many"}, ["PACE_JOBS='many'"]),
])
def test_a_bad_environment_value_is_one_line_naming_it(db, tmp_path, env, fragments):
    _one_line(run_pace("loocv", "abs", "--db", db, "--out", tmp_path / "o", env=env), *fragments)
    assert not (tmp_path / "o").exists()


def test_pace_jobs_sets_the_kernel_threads(monkeypatch):
    from warehouse.settings import jobs

    monkeypatch.setenv("PACE_JOBS", "3")
    assert jobs() == settings.jobs() == 3
    monkeypatch.delenv("PACE_JOBS")
    assert settings.jobs() >= 1
    for bad in ("0", "-1", "2.5", "x"):
        monkeypatch.setenv("PACE_JOBS", bad)
        with pytest.raises(Exception, match=f"PACE_JOBS={bad!r}"):
            jobs()
