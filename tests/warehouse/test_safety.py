"""Safe by default: nothing deleted that a command did not create, read-only unless asked, one-line
errors with exit code 2 for every bad input, honest metadata."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import run_pace, write_csv
from warehouse.connect import connect


@pytest.fixture
def small_db(tmp_path, small_tree) -> Path:
    (tmp_path / "wh").mkdir()
    db = tmp_path / "wh" / "pace.duckdb"
    assert run_pace("ingest", small_tree, "--db", db, "--no-progress").exit_code == 0
    return db


@pytest.fixture
def synth(tmp_path, synthetic_db) -> Path:
    """A private copy of the session's synthetic warehouse (14 models)."""
    (tmp_path / "s").mkdir()
    db = tmp_path / "s" / "pace.duckdb"
    shutil.copy(synthetic_db, db)
    return db


def _one_line_error(result, *needles):
    assert result.exit_code == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_a_failed_first_ingest_leaves_no_warehouse_behind(tmp_path, small_tree):
    bad = tmp_path / "bad"
    shutil.copytree(small_tree, bad)
    victim = sorted(bad.rglob("*.csv"))[0]
    victim.write_text(victim.read_text() + "garbage,line,x,y,z\n")
    (tmp_path / "new").mkdir()
    _one_line_error(run_pace("ingest", bad, "--db", tmp_path / "new" / "pace.duckdb", "--no-progress"),
                    f"{victim.name}:", "fields")
    assert list((tmp_path / "new").iterdir()) == []
    assert run_pace("ingest", small_tree, "--db", tmp_path / "new" / "pace.duckdb", "--no-progress").exit_code == 0
    before = (tmp_path / "new" / "pace.duckdb").stat().st_size
    _one_line_error(run_pace("ingest", bad, "--db", tmp_path / "new" / "pace.duckdb", "--no-progress"), "fields")
    assert (tmp_path / "new" / "pace.duckdb").stat().st_size == before      # an existing warehouse stays


# ---------------------------------------------------------------------------------------- export
def test_export_refuses_a_folder_with_a_users_file(tmp_path, small_db):
    out = tmp_path / "ex"
    write_csv(out / "notes.txt", "mine")
    _one_line_error(run_pace("export", out, "--db", small_db), "is not empty", "--overwrite")
    forced = run_pace("export", out, "--db", small_db, "--overwrite")        # writes beside, deletes nothing
    assert forced.exit_code == 0 and (out / "notes.txt").read_text() == "mine" and (out / "SCHEMA.md").is_file()


def test_export_into_the_warehouse_folder_and_into_dot_never_deletes(tmp_path, small_db, monkeypatch):
    wh = small_db.parent
    before = sorted(p.name for p in wh.iterdir())
    _one_line_error(run_pace("export", wh, "--db", small_db), "is not empty")
    assert sorted(p.name for p in wh.iterdir()) == before and small_db.is_file()
    checkout = tmp_path / "checkout"
    write_csv(checkout / ".git" / "HEAD", "ref")
    write_csv(checkout / "main.py", "code")
    monkeypatch.chdir(checkout)
    _one_line_error(run_pace("export", ".", "--db", small_db), "is not empty")
    assert (checkout / ".git" / "HEAD").is_file() and (checkout / "main.py").is_file()


def test_export_overwrite_replaces_only_its_own_files(tmp_path, small_db):
    out = tmp_path / "ex"
    assert run_pace("export", out, "--db", small_db).exit_code == 0
    write_csv(out / "mine.txt", "keep")
    _one_line_error(run_pace("export", out, "--db", small_db), "an earlier export")
    (out / "benchmarks.parquet").write_bytes(b"edited by hand")
    _one_line_error(run_pace("export", out, "--db", small_db, "--overwrite"), "changed since pace wrote it")
    (out / "benchmarks.parquet").unlink()
    again = run_pace("export", out, "--db", small_db, "--overwrite")
    assert again.exit_code == 0 and (out / "mine.txt").read_text() == "keep"
    manifest = json.loads((out / ".pace-outputs.json").read_text())
    assert "mine.txt" not in manifest["export"]["files"] and "scores/benchmark=gaia/data_0.parquet" in \
        manifest["export"]["files"]


def test_export_holds_every_table_and_view_with_described_columns(tmp_path, small_db):
    out = tmp_path / "ex"
    assert run_pace("export", out, "--db", small_db).exit_code == 0
    for name in ("instance_target_corr", "model_ability", "current_fits", "proxy_instances",
                 "loocv_pair_predictions", "loocv_pair_metrics"):
        assert (out / f"{name}.parquet").is_file(), name
    schema = (out / "SCHEMA.md").read_text()
    assert "- `source_ref` VARCHAR: score_files.path for ingest" in schema
    assert "- `tree` VARCHAR: the results tree" in schema
    assert "- `mean` DOUBLE: published semantics" in schema


# ---------------------------------------------------------------------------------- --out folders
def test_failed_loocv_keeps_the_csv_and_a_rerun_clears_only_its_own_stale_plots(tmp_path, synth):
    out = tmp_path / "out"
    write_csv(out / "abs_predictions.csv", "model,target,predicted,actual,abs_error\nA,gaia,0.5,0.5,0\n")
    # a CSV this command did not write is never overwritten
    _one_line_error(run_pace("loocv", "abs", "--count", "10", "--db", synth, "--out", out),
                    "abs_predictions.csv exists and was not written by this command")
    (out / "abs_predictions.csv").unlink()
    write_csv(out / "mine.png", "user plot")
    few = ["--count", "10", "--sources", "ifeval,planbench"]       # what is written matters here, not the fit
    first = run_pace("loocv", "abs", *few, "--targets", "gaia,swtbench", "--db", synth, "--out", out, "--plots")
    assert first.exit_code == 0, first
    assert (out / "abs_loocv_gaia.png").is_file() and (out / "abs_loocv_swtbench.png").is_file()
    real = (out / "abs_predictions.csv").read_bytes()
    # a failed evaluation changes nothing
    _one_line_error(run_pace("loocv", "abs", "--sources", "nosuch", "--db", synth, "--out", out),
                    "--sources", "'nosuch'")
    assert (out / "abs_predictions.csv").read_bytes() == real
    second = run_pace("loocv", "abs", *few, "--targets", "gaia", "--db", synth, "--out", out, "--plots")
    assert second.exit_code == 0, second
    assert (out / "abs_loocv_gaia.png").is_file() and not (out / "abs_loocv_swtbench.png").exists()
    assert (out / "mine.png").read_text() == "user plot"
    # plots are drawn on request only: a run without --plots leaves none of its own behind
    third = run_pace("loocv", "abs", *few, "--targets", "gaia", "--db", synth, "--out", out)
    assert third.exit_code == 0 and "plots: add --plots" in third.stdout, third
    assert sorted(p.name for p in out.glob("*.png")) == ["mine.png"]
    with (out / "abs_predictions.csv").open() as fh:
        assert {line.split(",")[1] for line in list(fh)[1:]} == {"gaia"}


# -------------------------------------------------------------------------------- sql / shell
@pytest.mark.parametrize("statement,needle", [
    ("DROP TABLE scores", "--write"), ("DELETE FROM scores", "--write"), ("UPDATE scores SET score = 0", "--write"),
    ("INSERT INTO benchmarks VALUES ('x', 'source')", "--write"), ("CREATE TABLE t AS SELECT 1", "--write"),
    ("SELECT 1; DELETE FROM scores", "--write"),
    # files and extensions stay out of reach with --write too (tests/warehouse/test_sql_sandbox.py)
    ("ATTACH 'other.duckdb' AS o (READ_WRITE)", "outside the warehouse"),
    ("COPY scores TO 'dump.csv'", "outside the warehouse"), ("INSTALL httpfs", "outside the warehouse")])
def test_sql_is_read_only_by_default(tmp_path, small_db, statement, needle, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = small_db.read_bytes()
    _one_line_error(run_pace("sql", statement, "--db", small_db), needle)
    assert small_db.read_bytes() == before
    assert not (tmp_path / "dump.csv").exists() and not (tmp_path / "other.duckdb").exists()


def test_sql_write_is_explicit_and_keeps_the_lake_in_step(small_db):
    ok = run_pace("sql", "SELECT count(*) AS n FROM scores", "--db", small_db, "--json")
    assert json.loads(ok.stdout) == [{"n": 12}]
    assert run_pace("sql", "DELETE FROM scores WHERE model = 'M1'", "--db", small_db, "--write").exit_code == 0
    con = connect(small_db)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 6 and lake_drift(con) == {}
    con.close()
    _one_line_error(run_pace("sql", "DROP VIEW scores", "--db", small_db, "--write"), "scores table is gone",
                    "pace ingest")


def test_a_failing_statement_of_several_says_what_was_kept(small_db):
    """Each statement of a --write script runs on its own: the error said nothing of the ones before it, which
    stayed (stranger); between BEGIN and COMMIT none stays, and the error says nothing more."""
    role = "SELECT role FROM benchmarks WHERE benchmark = 'src'"
    script = "UPDATE benchmarks SET role = 'excluded' WHERE benchmark = 'src'; SELECT * FROM nope"
    _one_line_error(run_pace("sql", f"BEGIN; {script}; COMMIT;", "--db", small_db, "--write"), "nope")
    assert json.loads(run_pace("sql", role, "--db", small_db, "--json").stdout) == [{"role": "source"}]
    failed = run_pace("sql", script, "--db", small_db, "--write")
    _one_line_error(failed, "nope", "ran on their own and are kept", "BEGIN; and COMMIT;")
    assert json.loads(run_pace("sql", role, "--db", small_db, "--json").stdout) == [{"role": "excluded"}]


def test_shell_is_read_only_unless_asked(small_db, capsys):
    import io

    from warehouse.shell import run_shell

    con = connect(small_db, read_only=True)
    run_shell(con, stdin=io.StringIO("DELETE FROM scores;\nSELECT count(*) AS n FROM scores;\n.quit\n"))
    out = capsys.readouterr().out
    assert "--write" in out and "12" in out


# ------------------------------------------------------------------------------- the database file
@pytest.mark.parametrize("command", [["status"], ["sql", "SELECT 1"], ["predict", "M1"], ["plan", "M1"],
                                     ["export", "EXPORT"], ["loocv", "abs"], ["fit"], ["alias", "list"],
                                     ["benchmarks", "list"], ["doctor"]])
def test_a_missing_warehouse_is_an_error_for_read_commands(tmp_path, command):
    db = tmp_path / "typo" / "pace.duckdb"
    args = [str(tmp_path / "ex") if a == "EXPORT" else a for a in command]
    _one_line_error(run_pace(*args, "--db", db), "no warehouse at", "typo")
    assert not db.parent.exists() and not (tmp_path / "ex").exists()
    _one_line_error(run_pace(*args, "--db", tmp_path / "missing.duckdb"), "no warehouse at")
    assert not (tmp_path / "missing.duckdb").exists()


def test_create_commands_refuse_a_missing_folder_and_garbage_files(tmp_path, small_tree):
    _one_line_error(run_pace("ingest", small_tree, "--db", tmp_path / "typo" / "w.duckdb"), "does not exist")
    assert not (tmp_path / "typo").exists()
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_text("not a database")
    _one_line_error(run_pace("status", "--db", garbage), "is not a DuckDB database file")
    _one_line_error(run_pace("ingest", small_tree, "--db", garbage), "is not a DuckDB database file")
    assert garbage.read_text() == "not a database"
    other = tmp_path / "other.duckdb"                    # somebody else's DuckDB file
    duckdb.connect(str(other)).execute("CREATE TABLE t AS SELECT 1 AS x").close()
    before = other.read_bytes()
    for command in (["status"], ["doctor"], ["alias", "remove", "x"]):
        _one_line_error(run_pace(*command, "--db", other), "not a pace warehouse")
    assert other.read_bytes() == before


def test_a_data_file_named_as_the_warehouse_is_refused_and_kept(tmp_path, small_tree):
    """DuckDB opens an existing .csv as an in-memory database holding it as a table: `pace ingest --db
    scores.csv` said it ingested 37,834 rows, kept none, and left a lake stamped by no database."""
    scores = tmp_path / "scores.csv"
    scores.write_text("id,score,metric_name\nq1,1,acc\n")
    for command in (["ingest", small_tree, "--no-progress"], ["status"], ["sql", "SELECT 1"],
                    ["sql", "CREATE TABLE t (x INT)", "--write"]):
        _one_line_error(run_pace(*command, "--db", scores), "is not a DuckDB database file")
    assert scores.read_text() == "id,score,metric_name\nq1,1,acc\n"
    # a new warehouse is never named like a data file (it would be read as one)
    _one_line_error(run_pace("ingest", small_tree, "--db", tmp_path / "new.parquet", "--no-progress"),
                    "named like a .parquet data file", "new.duckdb")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv", "tree"]


def test_a_file_where_a_folder_is_wanted_is_one_line_and_nothing_is_made(tmp_path, small_tree, small_db):
    """--lake / PACE_LAKE naming a file (or a path through one) and `pace export FILE/sub` raised
    NotADirectoryError / FileExistsError with exit 1; a first ingest so refused left its new warehouse."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    fresh = tmp_path / "fresh.duckdb"
    for lake in (afile, afile / "sub"):
        _one_line_error(run_pace("ingest", small_tree, "--db", fresh, "--lake", lake, "--no-progress"),
                        "--lake / PACE_LAKE", str(afile))
        _one_line_error(run_pace("status", "--db", small_db, env={"PACE_LAKE": lake}), "--lake / PACE_LAKE")
        _one_line_error(run_pace("doctor", "--db", small_db, "--lake", lake), "--lake / PACE_LAKE")
    assert not fresh.exists() and afile.read_text() == "x"
    _one_line_error(run_pace("export", afile / "sub", "--db", small_db), "cannot be made a folder", str(afile))
    _one_line_error(run_pace("export", afile, "--db", small_db), "exists and is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != small_db.parent.name) == ["afile", "tree"]


def test_an_ingest_error_is_one_line_with_its_progress_bar_on(tmp_path, small_tree):
    """The progress bar (on by default) drew a blank line on a stderr that is not a terminal, before the error."""
    write_csv(small_tree / "gaia" / "Zed.csv", "id,score,metric_name\na,1,acc\nb,1,acc,extra\n")
    failed = run_pace("ingest", small_tree, "--db", tmp_path / "w.duckdb")
    assert failed.exit_code == 2 and failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, failed


def test_a_bad_value_from_a_variable_names_the_variable(tmp_path, small_tree, small_db):
    """Commands without their own wrapper named the flag only (PACE_EXPORT_FORMAT=xml: "--format 'xml' is not
    one of: parquet, eee"); a flag on the line wins, and then the variable is not named."""
    bad = run_pace("export", tmp_path / "out", "--db", small_db, env={"PACE_EXPORT_FORMAT": "xml"})
    _one_line_error(bad, "--format 'xml'", "(from PACE_EXPORT_FORMAT='xml')")
    bad = run_pace("ingest", small_tree, "--db", small_db, "--no-progress", env={"PACE_DUPLICATES": "zz"})
    _one_line_error(bad, "--duplicates 'zz'", "(from PACE_DUPLICATES='zz')")
    flag = run_pace("ingest", small_tree, "--db", small_db, "--duplicates", "yy", env={"PACE_DUPLICATES": "zz"})
    _one_line_error(flag, "--duplicates 'yy'")
    assert "PACE_DUPLICATES" not in flag.stderr


def test_read_commands_do_not_write_the_file(small_db):
    before = small_db.read_bytes()
    for command in (["status"], ["sql", "SELECT * FROM models"], ["benchmarks", "list"], ["doctor", "--check"]):
        assert run_pace(*command, "--db", small_db).exit_code == 0, command
    assert small_db.read_bytes() == before


def _hold(db: Path, read_only: bool):
    code = (f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}, read_only={read_only}); "
            "print('ready', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_readers_work_while_another_process_reads_and_a_writer_lock_is_named(small_db):
    reader = _hold(small_db, read_only=True)            # e.g. an open `pace shell`
    try:
        result = run_pace("sql", "SELECT count(*) AS n FROM scores", "--db", small_db, "--json")
        assert result.exit_code == 0 and json.loads(result.stdout) == [{"n": 12}]
        _one_line_error(run_pace("benchmarks", "set", "src", "excluded", "--db", small_db, "--wait", "0"),
                        "in use by another process", f"PID {reader.pid}")
    finally:
        reader.kill()
        reader.wait()
    writer = _hold(small_db, read_only=False)           # e.g. a running ingest
    try:
        _one_line_error(run_pace("status", "--db", small_db, "--wait", "0"), "in use by another process",
                        f"PID {writer.pid}")
    finally:
        writer.kill()
        writer.wait()


def test_an_outdated_schema_is_migrated_by_a_write_and_explained_when_it_cannot_be(small_db):
    con = duckdb.connect(str(small_db))
    con.execute("UPDATE pace_meta SET value = 'old' WHERE key = 'schema'")
    con.close()
    reader = _hold(small_db, read_only=True)
    try:
        _one_line_error(run_pace("status", "--db", small_db, "--wait", "0"), "made by another version of pace",
                        "pace doctor")
    finally:
        reader.kill()
        reader.wait()
    assert run_pace("status", "--db", small_db).exit_code == 0        # free now: migrated on the way
    assert duckdb.connect(str(small_db), read_only=True).execute(
        "SELECT value <> 'old' FROM pace_meta WHERE key = 'schema'").fetchone()[0]


# -------------------------------------------------------------------------------------- validation
BAD_INPUT = [
    (["loocv", "abs", "--sources", "nosuch"], ["--sources", "'nosuch'", "sources:"]),
    (["loocv", "abs", "--sources", "gaia"], ["'gaia' is a target benchmark, not a source"]),
    (["loocv", "abs", "--targets", "ifeval"], ["'ifeval' is a source benchmark, not a target"]),
    (["loocv", "abs", "--count", "0"], ["--count must be an integer >= 1, not 0"]),
    (["loocv", "abs", "--B", "-1"], ["--B"]),
    (["loocv", "abs", "--seed", "-3"], ["--seed"]),
    (["loocv", "abs", "--q", "1.5"], ["--q must be in [0, 1]"]),
    (["loocv", "abs", "--m", "-0.1"], ["--m"]),
    (["loocv", "abs", "--nc-h", "0"], ["--nc-h"]),
    (["loocv", "abs", "--nc-d", "0"], ["--nc-d"]),
    (["loocv", "abs", "--nc-max", "0"], ["--nc-max"]),
    (["loocv", "abs", "--missing", "skip"], ["--missing 'skip' is not one of: mask, zero, auto"]),
    (["loocv", "abs", "--method", "magic"], ["--method 'magic' is not one of"]),
    (["loocv", "pair", "--count", "-5"], ["--count"]),
    (["loocv", "pair", "--method", "magic"], ["--method"]),
    (["sweep", "--counts", "0"], ["--counts"]),
    (["sweep", "--counts", "ten"], ["'ten' is not an integer"]),
    (["sweep", "--methods", "magic"], ["--methods 'magic'"]),
    (["fit", "--sources", "nosuch"], ["--sources", "'nosuch'"]),
    (["fit", "--sources", "gaia"], ["target benchmark, not a source"]),
    (["fit", "--targets", "ifeval"], ["source benchmark, not a target"]),
    (["fit", "--count", "0"], ["--count"]),
    (["fit", "--count", "-5"], ["--count"]),
    (["fit", "--level", "2"], ["--level must be in (0, 1)"]),
    (["fit", "--task", "all"], ["--task 'all'"]),
    (["fit", "--method", "magic"], ["--method"]),
    (["fit", "--exclude", "Nobody"], ["--exclude", "'Nobody'"]),
    (["predict", ""], ["MODEL must be a non-empty model name"]),
    (["predict", "   "], ["MODEL must be a non-empty"]),
    (["predict", "Orrin-5.0", "--min-coverage", "7"], ["--min-coverage must be in [0, 1]"]),
    (["plan", ""], ["MODEL must be a non-empty"]),
    (["benchmarks", "set", "nosuch", "target"], ["no benchmark 'nosuch'"]),
    (["benchmarks", "set", "ifeval", "boss"], ["ROLE 'boss' is not one of: target, source, excluded"]),
    (["alias", "add", "", "Orrin-5.0"], ["ALIAS must be a non-empty"]),
    (["alias", "add", "Orrin-5.0", "Orrin-5.0"], ["must differ"]),
    (["alias", "remove", "nosuch"], ["no alias 'nosuch'"]),
    (["sql", "  "], ["empty query"]),
    (["sql", "SELEC 1"], ["Parser Error"]),
    (["demo-data", "X", "--models", "0"], ["--models"]),
    (["demo-data", "X", "--scale", "0"], ["--scale"]),
    (["demo-data", "X", "--seed", "-1"], ["--seed"]),
    (["demo", "--seed", "-1"], ["--seed"]),
    (["ingest", "NOSUCHTREE"], ["no such directory"]),
    (["selections", "import", "NOSUCHFILE"], ["no such file"]),
]


@pytest.mark.parametrize("args,needles", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_one_line_with_exit_code_2(tmp_path, synth, args, needles, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = synth.read_bytes()
    _one_line_error(run_pace(*args, *([] if args[0] == "demo-data" else ["--db", synth])), *needles)
    assert synth.read_bytes() == before
    assert not (tmp_path / "X").exists() and not (tmp_path / "out").exists()


def test_model_names_are_trimmed(synth):
    assert run_pace("fit", "--count", "10", "--no-intervals", "--no-anchors", "--task", "abs",
                    "--exclude", "Orrin-5.0", "--db", synth).exit_code == 0
    spaced = run_pace("predict", " Orrin-5.0 ", "--db", synth, "--json", "--allow-partial")
    assert spaced.exit_code == 0, spaced
    assert json.loads(spaced.stdout)["model"] == "Orrin-5.0"


def _leaf_commands():
    import typer

    from warehouse.cli import app

    def walk(cmd, path):
        sub = getattr(cmd, "commands", None)
        if sub:
            for name, child in sub.items():
                yield from walk(child, path + [name])
        else:
            yield path, cmd
    return list(walk(typer.main.get_command(app), []))


def test_every_flag_of_every_command_rejects_a_bad_value_in_one_line(tmp_path, monkeypatch):
    """A typo'd flag, and a value of the wrong kind for each flag, end in one line and exit 2."""
    monkeypatch.chdir(tmp_path)
    missing_db = tmp_path / "missing" / "pace.duckdb"
    checked = 0
    for path, cmd in _leaf_commands():
        required = [p for p in cmd.params if getattr(p, "required", False) and not p.opts[0].startswith("-")]
        positional = ["x"] * len(required)
        db = [] if path == ["demo-data"] else ["--db", missing_db]
        result = run_pace(*path, *positional, "--no-such-flag", *db)
        _one_line_error(result, "--no-such-flag")
        for param in cmd.params:
            if not param.opts[0].startswith("--") or param.opts[0] in ("--help", "--db") or param.is_flag:
                continue
            bad = "not-a-number" if param.bare_type() in (int, float) else "nosuch"
            result = run_pace(*path, *positional, param.opts[0], bad, *db)
            assert result.exit_code == 2 and "Traceback" not in result.output, (path, param.opts[0], result)
            assert len(result.stderr.strip().splitlines()) == 1, (path, param.opts[0], result)
            checked += 1
    assert checked > 60 and not missing_db.parent.exists()


# ------------------------------------------------------------------------------------- metadata
def test_trained_on_lists_only_models_with_target_scores_and_pair_predictions_skip_empty_opponents(tmp_path):
    from ingest.synthetic import generate_tree
    from warehouse.fit import FitRequest, fit_and_store

    tree = tmp_path / "tree"
    generate_tree(tree, n_models=8, seed=3, scale=0.3)
    gaia = sorted((tree / "gaia").glob("*.csv"))
    gaia[0].unlink()                                               # a model without gaia scores
    write_csv(tree / "gaia" / "Only-Target.csv", gaia[1].read_text())    # and one with target files only
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tree, tmp_path / "lake")
    fit_and_store(con, FitRequest(method="default", count=10, B=5, seed=1, intervals=False))
    trained = dict(con.execute("SELECT target, trained_on FROM current_fits WHERE task = 'abs'").fetchall())
    assert gaia[0].stem not in trained["gaia"] and gaia[0].stem in trained["swebench"]
    for target, models in trained.items():
        with_rows = {m for (m,) in con.execute("SELECT DISTINCT model FROM scores WHERE benchmark = ?",
                                               [target]).fetchall()}
        assert set(models) <= with_rows, target
    opponents = {o for (o,) in con.execute("SELECT DISTINCT opponent FROM pair_predictions").fetchall()}
    assert "Only-Target" not in opponents and gaia[0].stem in opponents
    assert con.execute("SELECT count(*) FROM pair_predictions WHERE model = 'Only-Target'").fetchone()[0] == 0
    assert con.execute("SELECT min(coverage) FROM pair_predictions").fetchone()[0] > 0
