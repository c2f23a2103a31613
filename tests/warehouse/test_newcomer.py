"""What a newcomer meets first: which data `make demo` / `pace ingest` take (a variable wins over the
default), errors in the words of the interface in use (`write=True` from Python, `--write` from the
command line), and `pace sql` results that stay readable when wide (`--format`)."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.errors import IngestError
from tests.helpers import run_pace, synthetic_warehouse, write_csv
from warehouse import Warehouse
from warehouse.demo import DEMO_DATA, find_or_make_data
from warehouse.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def _tree(root, models):
    for model in models:
        write_csv(root / "src" / "leaf" / f"{model}.csv", "id,score,metric_name\nx1,1.0,acc\nx2,0.0,acc\n")
        write_csv(root / "gaia" / f"{model}.csv", "id,score,metric_name\ng1,0.5,acc\n")
    return root


# ------------------------------------------------------------------------------ which data
def test_the_results_variable_wins_over_the_default_tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _tree(tmp_path / "results" / "standardized_results", ["Default1", "Default2"])
    _tree(tmp_path / "mine", ["Mine1", "Mine2"])
    r = run_pace("ingest", "--db", "w.duckdb", "--json", env={"PACE_RESULTS_DIR": str(tmp_path / "mine")})
    assert r.exit_code == 0, r
    assert json.loads(r.stdout)["models"] == ["Mine1", "Mine2"]
    assert find_or_make_data(0) == (Path("results") / "standardized_results", False)    # no variable: default


def test_the_demo_runs_on_the_tree_named_and_refuses_one_that_is_not_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PACE_RESULTS_DIR", raising=False)
    (tmp_path / DEMO_DATA).mkdir()
    (tmp_path / DEMO_DATA / "README.md").write_text("SYNTHETIC: made earlier\n")
    assert find_or_make_data(0) == (DEMO_DATA, True)                        # nothing named or found
    mine = _tree(tmp_path / "mine", ["M1", "M2"])
    assert find_or_make_data(0, mine) == (mine, False)
    monkeypatch.setenv("PACE_RESULTS_DIR", str(mine))
    assert find_or_make_data(0) == (mine, False)
    with pytest.raises(UserError, match="PACE_RESULTS_DIR .*nowhere: no such folder"):
        monkeypatch.setenv("PACE_RESULTS_DIR", str(tmp_path / "nowhere"))
        find_or_make_data(0)
    r = run_pace("demo", "--results", tmp_path / "typo")
    assert r.exit_code == 2 and r.stderr.strip() == f"error: --results {tmp_path / 'typo'}: no such folder " \
                                                    "(a results tree <benchmark>/[<subdir>/]<Model>.csv)"



def test_the_demo_on_a_tree_without_enough_target_scores_says_so_in_one_line(tmp_path, monkeypatch):
    """PACE_RESULTS_DIR at a tree of source benchmarks only (the holdout tree's shape): nothing to evaluate."""
    monkeypatch.chdir(tmp_path)
    sources = tmp_path / "sources"
    for model in ("M1", "M2", "M3", "M4"):
        write_csv(sources / "src" / "leaf" / f"{model}.csv", "id,score,metric_name\nx1,1.0,acc\nx2,0.0,acc\n")
    r = run_pace("demo", env={"PACE_RESULTS_DIR": str(sources)})
    assert r.exit_code == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {sources}: 0 models with target scores"), r.stderr
    assert "at least 4" in lines[0] and "ValueError" not in lines[0]


# --------------------------------------------------------------------- errors in their words
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    db, summary = synthetic_warehouse(tmp_path_factory.mktemp("newcomer"), n_models=3, seed=2, scale=0.05)
    return db, summary


def test_errors_speak_the_api_in_python_and_flags_on_the_command_line(small):
    db, _ = small
    with pytest.raises(UserError) as api:
        Warehouse(db).sql("DELETE FROM scores")
    assert str(api.value).endswith("add write=True to run it") and "--" not in str(api.value)
    cli = run_pace("sql", "DELETE FROM scores", "--db", db)
    assert cli.exit_code == 2 and cli.stderr.strip().endswith("add --write to run it")

    with pytest.raises(UserError) as api:
        Warehouse(db).fit(exclude="Nobody")
    assert str(api.value).startswith("exclude: no model 'Nobody'")
    cli = run_pace("fit", "--exclude", "Nobody", "--db", db)
    assert cli.stderr.startswith("error: --exclude: no model 'Nobody'")

    with pytest.raises((UserError, IngestError)) as api:
        Warehouse(db).ingest(db.parent / "tree", duplicates="keep")
    assert str(api.value).startswith("duplicates 'keep' is not one of")
    cli = run_pace("ingest", db.parent / "tree", "--duplicates", "keep", "--db", db)
    assert "error: --duplicates 'keep' is not one of" in cli.stderr

    with pytest.raises(IngestError) as api:                 # ingest's own error type speaks the same way
        Warehouse(db).ingest(db.parent / "tree", strict=True)
    assert "strict=True: " in str(api.value) and "--strict" not in str(api.value)
    cli = run_pace("ingest", db.parent / "tree", "--strict", "--db", db)
    assert "--strict: " in cli.stderr


def test_a_python_caller_reads_api_words_before_the_warehouse_api_is_imported(tmp_path, small_tree):
    """`ingest.load.ingest_tree(..., strict=True)` in a fresh interpreter (nothing has imported
    ``warehouse.api``, whose signatures hold the API's spellings): still strict=True, not --strict."""
    (small_tree / "src" / "leaf_a" / "Stray.csv").write_text("id,score,metric_name\nx9,1,acc\n")
    code = ("import sys\nfrom ingest.errors import IngestError\nfrom ingest.load import ingest_tree\n"
            "from warehouse.connect import connect\n"
            "try:\n    ingest_tree(connect(sys.argv[1]), sys.argv[2], sys.argv[3], strict=True)\n"
            "except IngestError as exc:\n    print(exc.message.splitlines()[0])\n")
    out = subprocess.run([sys.executable, "-c", code, tmp_path / "w.duckdb", small_tree, tmp_path / "lake"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0 and out.stdout.startswith("strict=True: "), out


# ------------------------------------------------------------------------------ pace sql formats
WIDE = "SELECT * FROM instance_stats ORDER BY benchmark, subdir, instance_id LIMIT 3"


def test_a_wide_result_is_shown_as_records_not_empty_columns(small):
    db, _ = small
    r = run_pace("sql", WIDE, "--db", db, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r
    expected = run_pace("sql", WIDE, "--db", db, "--json").stdout
    first = json.loads(expected)[0]
    assert "one record per row" in r.stderr and "…" not in r.stdout
    for column, value in first.items():                                    # every name and value, whole
        assert f"{column} = " in r.stdout
    assert f"instance_id = {first['instance_id']}" in r.stdout and r.stdout.count("\n\n") == 2
    narrow = run_pace("sql", "SELECT benchmark, count(*) AS n FROM scores GROUP BY 1 ORDER BY 1", "--db", db,
                      env={"COLUMNS": "80"})
    assert "┃ benchmark" in narrow.stdout and "one record" not in narrow.stderr   # a table when it fits


def test_sql_formats_csv_markdown_line_json(small):
    db, _ = small
    query = "SELECT benchmark, count(*) AS n, 1.0 / 3 AS third, NULL AS nothing FROM scores GROUP BY 1 ORDER BY 1"
    as_json = json.loads(run_pace("sql", query, "--db", db, "--format", "json").stdout)
    as_csv = list(csv.DictReader(io.StringIO(run_pace("sql", query, "--db", db, "--format", "csv").stdout)))
    assert [r["benchmark"] for r in as_csv] == [r["benchmark"] for r in as_json]
    assert as_csv[0]["third"] == repr(1 / 3) and as_csv[0]["nothing"] == ""          # full precision, NULL empty
    md = run_pace("sql", query, "--db", db, env={"PACE_SQL_FORMAT": "markdown"}).stdout.splitlines()
    assert md[0] == "| benchmark | n | third | nothing |" and md[1] == "|---|---|---|---|"
    assert len(md) == 2 + len(as_json)
    line = run_pace("sql", query, "--db", db, "--format", "line", "--max-rows", "1")
    assert line.stdout.startswith(f"benchmark = {as_json[0]['benchmark']}\n        n = ")
    assert f"{len(as_json) - 1} more rows" in line.stderr


@pytest.mark.parametrize("args,env,message", [
    (["--format", "xml"], {}, "error: --format 'xml' is not one of: table, line, csv, json, markdown"),
    ([], {"PACE_SQL_FORMAT": "xml"}, "(from PACE_SQL_FORMAT='xml')"),
    (["--format", "csv", "--json"], {}, "error: --json and --format csv ask for two layouts"),
])
def test_a_bad_format_is_one_line(small, args, env, message):
    r = run_pace("sql", "SELECT 1", "--db", small[0], *args, env=env)
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1
