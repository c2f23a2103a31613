"""Ad-hoc SQL (`pace sql`, `pace shell`, ``Warehouse.sql``) is held by DuckDB itself: a read-only
open, no file or network access outside the warehouse, no extension installs or loads, and a locked
configuration; with ``--write`` tables change, never the machine."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_pace, write_csv
from warehouse import Warehouse
from warehouse.errors import UserError


def _warehouse(folder: Path) -> Path:
    """folder/wh/pace.duckdb holding a tiny tree, and folder/secret.csv, a file it must never read."""
    tree = folder / "tree"
    for model, score in (("M1", "1.0"), ("M2", "0.0")):
        for leaf in ("leaf_a", "leaf_b"):
            write_csv(tree / "src" / leaf / f"{model}.csv", f"id,score,metric_name\nx1,{score},acc\nx2,0.5,acc\n")
        write_csv(tree / "gaia" / f"{model}.csv", f"id,score,metric_name\ng1,{score},acc\ng2,1.0,acc\n")
    (folder / "wh").mkdir()
    db = folder / "wh" / "pace.duckdb"
    assert run_pace("ingest", tree, "--db", db, "--no-progress").exit_code == 0
    write_csv(folder / "secret.csv", "user,password\nroot,hunter2\n")
    return db


@pytest.fixture
def wh(tmp_path) -> Path:
    return _warehouse(tmp_path)


@pytest.fixture(scope="module")
def shared_wh(tmp_path_factory) -> Path:
    """One warehouse for the refusals (each test checks that nothing changed)."""
    return _warehouse(tmp_path_factory.mktemp("sandbox"))


def _refused(result, *needles) -> None:
    assert result.exit_code == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _still_works(db: Path, rows: int = 12) -> None:
    result = run_pace("sql", "SELECT count(*) AS n FROM scores", "--db", db, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == [{"n": rows}], result


# Each statement reaches outside the warehouse: a file written or read, a setting that would let it,
# the network, an extension. {db} and {tmp} are filled in.
HOSTILE = [
    ("SET log_query_path='{db}'; SELECT 1", "log_query_path"),
    ("PRAGMA enable_profiling='json'; PRAGMA profiling_output='{tmp}/x.json'; SELECT 1", "enable_profiling"),
    ("SET enable_external_access = true", "enable_external_access"),
    ("SET lock_configuration = false", "lock_configuration"),
    ("RESET allowed_directories", "allowed_directories"),
    ("SET allowed_directories = ['/']", "allowed_directories"),
    ("SELECT * FROM read_csv('{tmp}/secret.csv')", "secret.csv"),
    ("SELECT * FROM read_text('/etc/hostname')", "/etc/hostname"),
    ("SELECT * FROM glob('{tmp}/*')", "disabled by configuration"),
    ("SELECT * FROM read_csv('{tmp}/wh/lake/../../secret.csv')", "secret.csv"),
    ("SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')", "http://127.0.0.1:9/x.csv"),
    ("COPY scores TO '{tmp}/dump.csv'", "dump.csv"),
    ("EXPORT DATABASE '{tmp}/dump'", "dump"),
    ("ATTACH '{tmp}/other.duckdb' AS o", "other.duckdb"),
    ("INSTALL httpfs", "extension"),
    ("LOAD httpfs", ""),
]


@pytest.mark.parametrize("write", [False, True], ids=["read-only", "write"])
@pytest.mark.parametrize("statement,needle", HOSTILE, ids=[s for s, _ in HOSTILE])
def test_sql_cannot_reach_outside_the_warehouse(shared_wh, statement, needle, write):
    wh, tmp_path = shared_wh, shared_wh.parent.parent
    query = statement.format(db=wh, tmp=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    kept = [p for p in wh.parent.rglob("*") if p.is_file() and not (write and p.name.startswith(wh.name))]
    files = {p: p.read_bytes() for p in kept}          # the lake; the database file too when read-only
    result = run_pace("sql", query, "--db", wh, *(["--write"] if write else []))
    _refused(result, needle)
    assert "hunter2" not in result.output and "automatically install" not in result.stderr, result
    assert sorted(p.name for p in tmp_path.iterdir()) == before            # nothing written beside it
    _still_works(wh)
    assert {p: p.read_bytes() for p in kept if p.exists()} == files


def test_harmless_settings_and_pragmas_still_run(wh):
    result = run_pace("sql", "SET threads = 1; SET TimeZone = 'UTC'; PRAGMA table_info('scores')", "--db", wh,
                      "--json")
    assert result.exit_code == 0, result
    assert "instance_id" in {row["name"] for row in json.loads(result.stdout)}
    shown = run_pace("sql", "SELECT current_setting('enable_external_access') AS ext, "
                     "current_setting('lock_configuration') AS locked", "--db", wh, "--json")
    assert json.loads(shown.stdout) == [{"ext": False, "locked": True}]


def test_read_only_sql_cannot_change_the_warehouse_and_says_how(wh):
    before = wh.read_bytes()
    for statement in ("DROP TABLE scores", "DELETE FROM scores", "SELECT 1; UPDATE scores SET score = 0",
                      "CREATE TABLE t AS SELECT 1", "CHECKPOINT; DELETE FROM benchmarks"):
        _refused(run_pace("sql", statement, "--db", wh), "--write")
    assert wh.read_bytes() == before


def test_write_changes_tables_and_the_lake_only(tmp_path, wh):
    result = run_pace("sql", "DELETE FROM scores WHERE model = 'M1'; CREATE TABLE notes AS SELECT 1 AS x",
                      "--db", wh, "--write")
    assert result.exit_code == 0, result
    _still_works(wh, rows=6)
    status = run_pace("status", "--db", wh, "--json")
    assert json.loads(status.stdout)["lake_drift"] == []          # the lake followed on the same connection


def test_the_python_api_is_held_the_same_way(tmp_path, wh):
    warehouse = Warehouse(wh)
    for write in (False, True):
        with pytest.raises(UserError, match="log_query_path"):
            warehouse.sql(f"SET log_query_path = '{wh}'", write=write)
        with pytest.raises(UserError, match="secret.csv"):
            warehouse.sql(f"SELECT * FROM read_csv('{tmp_path}/secret.csv')", write=write)
    assert warehouse.sql("SELECT count(*) AS n FROM scores").column("n").to_pylist() == [12]


def test_a_connection_held_in_this_process_is_never_locked_by_ad_hoc_sql(tmp_path, wh):
    """The lock is set on a DuckDB instance of its own: a caller's connection to the same file keeps its
    settings (and DuckDB refuses to share one instance between the two configurations)."""
    mine = Warehouse(wh).connect()
    try:
        with pytest.raises(UserError, match="open in this process"):
            Warehouse(wh).sql("SELECT 1")
        assert mine.execute("SELECT current_setting('lock_configuration')").fetchone()[0] is False
        assert mine.execute(f"SELECT count(*) FROM read_csv('{tmp_path}/secret.csv')").fetchone()[0] == 1
    finally:
        mine.close()
    assert Warehouse(wh).sql("SELECT 1 AS one").column("one").to_pylist() == [1]


# ------------------------------------------------------------------------------------------ shell
def _shell(db: Path, stdin: str, *flags: str) -> subprocess.CompletedProcess:
    code = "import sys; from warehouse.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, "shell", "--db", str(db), *flags], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_a_refused_statement_in_a_piped_shell_exits_non_zero(tmp_path, wh):
    before = wh.read_bytes()
    refused = _shell(wh, "DROP TABLE scores;\n")
    assert refused.returncode == 2, refused
    assert "--write" in refused.stderr and "1 statement" in refused.stderr, refused
    assert wh.read_bytes() == before
    hostile = _shell(wh, f"SET log_query_path='{wh}';\nSELECT 42 AS answer;\n", "--write")
    assert hostile.returncode == 2 and "42" in hostile.stdout, hostile            # later statements still run
    _still_works(wh)
    ok = _shell(wh, "SELECT count(*) AS n FROM scores;\n.quit\n")
    assert ok.returncode == 0 and "12" in ok.stdout, ok


def test_shell_write_keeps_the_lake_in_step(tmp_path, wh):
    done = _shell(wh, "DELETE FROM scores WHERE model = 'M2';\n", "--write")
    assert done.returncode == 0, done
    status = json.loads(run_pace("status", "--db", wh, "--json").stdout)
    assert status["rows"] == 6 and status["lake_drift"] == []


def test_a_copied_warehouse_folder_still_reads(tmp_path, wh):
    copy = tmp_path / "copy"
    shutil.copytree(wh.parent, copy)
    _still_works(copy / "pace.duckdb")
    _refused(run_pace("sql", f"SELECT * FROM read_csv('{tmp_path}/secret.csv')", "--db", copy / "pace.duckdb"),
             "secret.csv")
