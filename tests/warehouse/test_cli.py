"""The `pace` command line: --db, --json, errors with exit code 2, sql and shell."""
from __future__ import annotations

import io
import json


from tests.helpers import run_pace, write_csv
from warehouse.connect import connect
from warehouse.shell import run_shell



def test_ingest_json_report_and_env_db(tmp_path, small_tree, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("PACE_DB", str(db))
    result = run_pace(*["ingest", str(small_tree), "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["files"] == 6 and report["rows"] == 12 and report["models"] == ["M1", "M2"]
    assert db.exists()                                       # PACE_DB was honoured


def test_ingest_bad_file_exits_2_with_path_and_line(tmp_path, small_tree):
    write_csv(small_tree / "src" / "leaf_a" / "M3.csv", "id,score,metric_name\nx,1,m\ny,1\n")
    result = run_pace(*["ingest", str(small_tree), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 2
    assert "M3.csv:3:" in result.output and "2 fields" in result.output


def test_ingest_without_data_says_how_to_get_some(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PACE_RESULTS_DIR", raising=False)
    result = run_pace(*["ingest", "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 2 and "pace demo-data" in result.output


def test_sql_json_and_status(tmp_path, small_tree):
    db = str(tmp_path / "w.duckdb")
    assert run_pace(*["ingest", str(small_tree), "--db", db]).exit_code == 0
    result = run_pace(*["sql", "SELECT model, mean FROM target_means ORDER BY model", "--db", db, "--json"])
    assert json.loads(result.stdout) == [{"model": "M1", "mean": 1.0}, {"model": "M2", "mean": 0.5}]
    bad = run_pace(*["sql", "SELECT nope FROM scores", "--db", db])
    assert bad.exit_code == 2 and "nope" in bad.output
    result = run_pace(*["status", "--db", db, "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    status = json.loads(result.stdout)
    assert status["rows"] == 12 and status["known_models"] == 2


def test_shell_runs_multiline_statements(tmp_path, small_tree, capsys):
    db = tmp_path / "w.duckdb"
    run_pace(*["ingest", str(small_tree), "--db", str(db)])
    run_shell(connect(db), stdin=io.StringIO("SELECT count(*) AS n\nFROM scores;\n.quit\n"))
    out = capsys.readouterr().out
    assert "12" in out


def test_alias_command_renames_rows(tmp_path, small_tree):
    (small_tree / "gaia" / "M2.csv").rename(small_tree / "gaia" / "M2-R.csv")
    db = str(tmp_path / "w.duckdb")
    run_pace(*["ingest", str(small_tree), "--db", db])
    result = run_pace(*["alias", "add", "M2-R", "M2", "--db", db])
    assert result.exit_code == 0 and "2 existing rows" in result.output
    means = json.loads(run_pace(*["sql", "SELECT mean FROM target_means WHERE model='M2'",
                                           "--db", db, "--json"]).stdout)
    assert means == [{"mean": 0.5}]


def test_every_command_has_help_and_db_option():
    for command in (["ingest"], ["status"], ["sql"], ["shell"], ["demo-data"], ["loocv", "abs"]):
        result = run_pace(*command, "--help")
        assert result.exit_code == 0, command
        if command[0] != "demo-data":
            assert "--db" in result.output, command


def test_entry_point_picks_compat_kernels_only_for_compat(monkeypatch):
    from models.compat.goal_a import COMPAT_NUMERICS_ENV
    from warehouse import entry

    assert entry.COMPAT_NUMERICS_ENV == COMPAT_NUMERICS_ENV
    assert entry._wants_compat(["pace", "loocv", "abs", "--method", "compat"])
    assert entry._wants_compat(["pace", "demo"])
    assert not entry._wants_compat(["pace", "loocv", "abs", "--method", "default"])
