"""The stored collapsed cells (table collapsed_cells) equal their rule (view collapsed_cells_live) after
every way pace writes scores or roles; a writer that fails leaves both as they were; a writer stopped
before recomputing leaves a mark that the next open (or `pace doctor`) acts on; `pace doctor` finds and
recomputes cells that scores changed outside pace left behind; predictions read from the stored cells
equal those worked out from the rule."""
from __future__ import annotations

import io
import json
import re

import duckdb
import pytest

import ingest.load
from ingest import collapsed, derived, summaries
from ingest.errors import IngestError
from ingest.harness import import_results
from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from tests.helpers import Killed, kill_at, lm_eval_output, run_pace, write_csv
from warehouse.aliases import add_alias
from warehouse.connect import connect, schema_fingerprint
from warehouse.roles import set_role
from warehouse.settings import SQL_DIR
from warehouse.shell import run_shell
from warehouse.sqlguard import after_write
from ingest import score_store

GOOD = "".join(f"{i},{1.0 if i % 10 < 8 else 0.0},acc\n" for i in range(40))     # mean 0.8
ZERO = "".join(f"{i},0.0,acc\n" for i in range(40))


def leaf_csv(body: str) -> str:
    return "id,score,metric_name\n" + body


def make_tree(root, models=("M1", "M2", "M3"), broken=("Broken",), leaves=("a", "b", "c")):
    """Source benchmark `bench` with three leaves; each model in ``broken`` scores 0 on leaf a only."""
    for leaf in leaves:
        for model in models:
            write_csv(root / "bench" / leaf / f"{model}.csv", leaf_csv(GOOD))
        for model in broken:
            write_csv(root / "bench" / leaf / f"{model}.csv", leaf_csv(ZERO if leaf == "a" else GOOD))
    return root


def stored(con) -> set[tuple]:
    return set(con.execute("SELECT model, benchmark, subdir, facet, reason FROM collapsed_cells").fetchall())


def assert_store_is_the_rule(con) -> None:
    """Every stored cell equals the rule's (values too), the stored source leaf sizes too, and no mark is left;
    and the summaries kept by the same mechanism (counters, instance_stats: ingest.summaries) equal theirs."""
    live = set(con.execute("SELECT model, benchmark, subdir, facet, reason FROM collapsed_cells_live").fetchall())
    assert stored(con) == live
    sizes = set(con.execute("SELECT benchmark, subdir, n_instances FROM source_leaves").fetchall())
    assert sizes == set(con.execute("SELECT * FROM source_leaves_live").fetchall())
    assert collapsed.drift(con) == {}
    assert not collapsed.is_stale(con)
    assert summaries.drift(con) == {} and not summaries.is_stale(con)
    assert con.execute("SELECT count(*) FROM instance_stats").fetchone()[0] == \
        con.execute("SELECT count(*) FROM instance_stats_live").fetchone()[0]


def ingested(tmp_path):
    """(warehouse path, open read-write connection): the test tree ingested into a new warehouse."""
    make_tree(tmp_path / "tree")
    db = tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    return db, con


@pytest.fixture
def wh(tmp_path):
    _, con = ingested(tmp_path)
    yield con
    con.close()


# ----------------------------------------------------------------------------------- every write path
def test_ingest_stores_the_cells_and_reports_them_from_the_store(tmp_path):
    make_tree(tmp_path / "tree")
    con = connect(tmp_path / "w.duckdb")
    report = ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    assert stored(con) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(con)
    assert [a.where for a in report.anomalies if a.kind == "collapsed_near_zero"] == ["bench/a"]
    assert "collapsed" in report.phases


def test_second_tree_changes_the_other_models_cells(tmp_path):
    """A cell needs two other models; a new model's tree makes an existing model's cell collapse."""
    make_tree(tmp_path / "one", models=("M1",))
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tmp_path / "one", tmp_path / "lake")
    assert stored(con) == set()
    make_tree(tmp_path / "two", models=("M2",), broken=())
    ingest_tree(con, tmp_path / "two", tmp_path / "lake")
    assert stored(con) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(con)


def test_changed_file_and_prune_recompute_the_cells(wh, tmp_path):
    tree = tmp_path / "tree"
    write_csv(tree / "bench" / "a" / "Broken.csv", leaf_csv(GOOD))            # the harness was fixed
    write_csv(tree / "bench" / "b" / "M3.csv", leaf_csv("".join(f"{i},0.0,acc\n" for i in range(0, 40, 4))))
    ingest_tree(wh, tree, tmp_path / "lake")
    assert stored(wh) == {("M3", "bench", "b", "", "failures_only")}
    assert_store_is_the_rule(wh)
    (tree / "bench" / "b" / "M3.csv").unlink()
    ingest_tree(wh, tree, tmp_path / "lake", prune=True)
    assert stored(wh) == set()
    assert_store_is_the_rule(wh)


def test_no_op_reingest_leaves_the_store_alone(wh, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(ingest.load, "refresh_derived", lambda con, timed=None: calls.append(con))
    report = ingest_tree(wh, tmp_path / "tree", tmp_path / "lake")
    assert report.files_unchanged == report.files and calls == []
    assert [a.where for a in report.anomalies if a.kind == "collapsed_near_zero"] == ["bench/a"]


def test_import_recomputes_the_cells(tmp_path):
    make_tree(tmp_path / "tree", broken=())
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    lm, map_path = lm_eval_output(tmp_path, benchmark="bench", subdir="a", score=0.0)
    import_results(con, "lm-eval", lm, map_path, lake=tmp_path / "lake")
    assert stored(con) == {("Qwen", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(con)


def test_alias_moves_the_cells_to_the_model(wh):
    add_alias(wh, "Broken", "Fixed-1")
    assert stored(wh) == {("Fixed-1", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(wh)


def test_role_change_recomputes_the_benchmark(wh):
    set_role(wh, "bench", "target")
    assert stored(wh) == set()
    assert_store_is_the_rule(wh)
    set_role(wh, "bench", "source")
    assert stored(wh) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(wh)


def test_benchmarks_set_command_recomputes(tmp_path):
    make_tree(tmp_path / "tree")
    db = tmp_path / "w.duckdb"
    assert run_pace("ingest", str(tmp_path / "tree"), "--db", db, "--no-progress").exit_code == 0
    assert run_pace("benchmarks", "set", "bench", "excluded", "--db", db).exit_code == 0
    con = connect(db, read_only=True)
    assert stored(con) == set()
    assert_store_is_the_rule(con)


def test_sql_write_recomputes(tmp_path):
    make_tree(tmp_path / "tree", broken=())
    db = tmp_path / "w.duckdb"
    assert run_pace("ingest", str(tmp_path / "tree"), "--db", db, "--no-progress").exit_code == 0
    result = run_pace("sql", "UPDATE scores SET score = 0 WHERE model = 'M2' AND subdir = 'b'", "--db", db, "--write")
    assert result.exit_code == 0, result.output
    con = connect(db, read_only=True)
    assert stored(con) == {("M2", "bench", "b", "", "near_zero")}
    assert_store_is_the_rule(con)


def test_sql_write_that_fails_midway_still_recomputes_what_was_committed(tmp_path):
    make_tree(tmp_path / "tree", broken=())
    db = tmp_path / "w.duckdb"
    assert run_pace("ingest", str(tmp_path / "tree"), "--db", db, "--no-progress").exit_code == 0
    result = run_pace("sql", "UPDATE scores SET score = 0 WHERE model = 'M2' AND subdir = 'b'; SELECT nope",
                      "--db", db, "--write")
    assert result.exit_code == 2 and "nope" in result.stderr
    con = connect(db, read_only=True, refresh_collapsed=False)        # as left by the command, not repaired
    assert stored(con) == {("M2", "bench", "b", "", "near_zero")}
    assert_store_is_the_rule(con)


def test_sql_that_only_reads_marks_nothing(wh):
    from warehouse.sqlguard import before_write

    before_write(wh, "SELECT count(*) FROM scores; EXPLAIN SELECT 1")
    assert not collapsed.is_stale(wh)


def test_shell_write_recomputes_when_it_ends(wh):
    run_shell(wh, stdin=io.StringIO("DELETE FROM scores WHERE model = 'M3';\n.quit\n"), write=True)
    assert collapsed.is_stale(wh)                           # marked before the write ran
    after_write(wh)                                         # what `pace shell --write` runs at the end
    assert stored(wh) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(wh)


# ----------------------------------------------------------------------------- all or nothing, marks
def test_strict_ingest_that_refuses_leaves_the_store_as_it_was(wh, tmp_path):
    before = stored(wh)
    write_csv(tmp_path / "tree" / "bench" / "b" / "M1.csv", leaf_csv(ZERO))
    with pytest.raises(IngestError, match="strict=True"):
        ingest_tree(wh, tmp_path / "tree", tmp_path / "lake", strict=True)
    assert stored(wh) == before
    assert_store_is_the_rule(wh)


def test_ingest_killed_while_recomputing_writes_nothing(wh, tmp_path, monkeypatch):
    rows = wh.execute("SELECT count(*) FROM scores").fetchone()[0]
    write_csv(tmp_path / "tree" / "bench" / "a" / "Broken.csv", leaf_csv(GOOD))
    kill_at(monkeypatch, ingest.load, "refresh_derived")
    with pytest.raises(Killed):
        ingest_tree(wh, tmp_path / "tree", tmp_path / "lake")
    assert wh.execute("SELECT count(*) FROM scores WHERE model = 'Broken' AND subdir = 'a' AND score > 0"
                      ).fetchone()[0] == 0
    assert wh.execute("SELECT count(*) FROM scores").fetchone()[0] == rows
    assert stored(wh) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(wh)


def test_alias_killed_while_recomputing_renames_nothing(wh, monkeypatch):
    kill_at(monkeypatch, collapsed, "refresh")
    with pytest.raises(Killed):
        add_alias(wh, "Broken", "Fixed-1")
    monkeypatch.undo()
    assert wh.execute("SELECT count(*) FROM scores WHERE model = 'Fixed-1'").fetchone()[0] == 0
    assert wh.execute("SELECT count(*) FROM model_aliases").fetchone()[0] == 0
    assert_store_is_the_rule(wh)


def test_a_mark_left_by_a_stopped_writer_is_finished_by_the_next_open(tmp_path):
    db, con = ingested(tmp_path)
    derived.mark_stale(con)                                 # as `pace sql --write` does before it writes
    score_store.execute(con, "UPDATE scores SET score = 1 WHERE model = 'Broken'")     # its rows; then it is killed
    con.close()
    con = connect(db, read_only=True, refresh_collapsed=False)
    assert collapsed.is_stale(con) and stored(con) == {("Broken", "bench", "a", "", "near_zero")}
    con.close()
    con = connect(db, read_only=True)                       # a reader: a brief write open recomputes
    assert stored(con) == set()
    assert_store_is_the_rule(con)


def test_a_reader_that_cannot_recompute_says_why(tmp_path):
    db, con = ingested(tmp_path)
    collapsed.mark_stale(con)
    con.close()
    holder = duckdb.connect(str(db), read_only=True)        # another process's reader would hold it so
    try:
        import subprocess
        import sys
        probe = subprocess.run([sys.executable, "-c", "from warehouse.connect import connect; import sys; "
                                f"connect({str(db)!r}, read_only=True)"], capture_output=True, text=True)
    finally:
        holder.close()
    assert probe.returncode != 0 and "stored collapsed cells out of date" in probe.stderr


def test_doctor_reports_and_recomputes_a_store_changed_outside_pace(tmp_path):
    db, con = ingested(tmp_path)
    con.close()
    raw = duckdb.connect(str(db))                           # a DuckDB client, not pace
    score_store.execute(raw, "UPDATE scores SET score = 1 WHERE model = 'Broken'")
    raw.close()
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0     # reads what pace kept: sees nothing
    check = run_pace("doctor", "--check", "--scan", "--db", db, "--json")
    assert check.exit_code == 1
    assert "collapsed cells: 1 row(s) of bench differ from scores: scores were changed outside pace" \
        in json.loads(check.stdout)["problems"]
    fixed = run_pace("doctor", "--db", db)
    assert fixed.exit_code == 0 and "recomputed the stored collapsed cells" in fixed.stdout
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
    con = connect(db, read_only=True)
    assert stored(con) == set()
    assert_store_is_the_rule(con)


def test_doctor_recomputes_source_leaf_sizes_changed_outside_pace(tmp_path):
    """The stored instance counts per source leaf (what model_sources reads) follow the rows too."""
    db, con = ingested(tmp_path)
    con.close()
    raw = duckdb.connect(str(db))                           # a DuckDB client, not pace: one more instance of bench/b
    score_store.execute(raw, "INSERT INTO scores SELECT model, benchmark, subdir, 'extra', score, metric_name, origin, source_ref, "
                "recorded_at FROM scores WHERE model = 'M1' AND subdir = 'b' LIMIT 1")
    raw.close()
    check = run_pace("doctor", "--check", "--scan", "--db", db, "--json")
    assert check.exit_code == 1 and "collapsed cells: 1 row(s) of bench differ" in check.stdout, check
    repair = run_pace("doctor", "--db", db)       # exit 1: the file's rows differ from scores, which only an
    assert repair.exit_code == 1 and "reloads them" in repair.stdout       # ingest of the file puts right
    con = connect(db, read_only=True)
    assert con.execute("SELECT n_instances FROM source_leaves WHERE subdir = 'b'").fetchall() == [(41,)]
    assert_store_is_the_rule(con)


def test_doctor_check_reports_a_mark_and_changes_nothing(tmp_path):
    db, con = ingested(tmp_path)
    collapsed.mark_stale(con)
    con.close()
    check = run_pace("doctor", "--check", "--db", db, "--json")
    assert check.exit_code == 1
    assert [p for p in json.loads(check.stdout)["problems"] if "a writer stopped before recomputing" in p]
    con = connect(db, read_only=True, refresh_collapsed=False)
    assert collapsed.is_stale(con)
    con.close()
    fixed = run_pace("doctor", "--db", db)
    assert fixed.exit_code == 0 and "recomputed the stored collapsed cells" in fixed.stdout
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0


def test_an_older_warehouse_with_the_view_is_migrated_and_filled(tmp_path):
    """Before the store, collapsed_cells was a view: the first open turns it into the table, filled."""
    db, con = ingested(tmp_path)
    con.execute("DROP TABLE collapsed_cells")
    con.execute("CREATE VIEW collapsed_cells AS SELECT * FROM collapsed_cells_live")
    con.execute("DELETE FROM pace_meta WHERE key IN ('collapsed_cells', 'schema')")
    con.execute("INSERT INTO pace_meta VALUES ('schema', 'older')")
    con.close()
    con = connect(db, read_only=True)
    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                             "WHERE table_name LIKE 'collapsed_cells%'").fetchall())
    assert kinds == {"collapsed_cells": "BASE TABLE", "collapsed_cells_live": "VIEW"}
    assert stored(con) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(con)
    assert con.execute("SELECT value FROM pace_meta WHERE key = 'schema'").fetchone()[0] == schema_fingerprint()


def test_a_new_rule_recomputes_everything(tmp_path):
    db, con = ingested(tmp_path)
    con.execute("UPDATE pace_meta SET value = 'an older rule' WHERE key = 'collapsed_cells'")
    con.execute("DELETE FROM collapsed_cells")
    con.close()
    con = connect(db)                                       # any open, after an upgrade that changed the rule
    assert stored(con) == {("Broken", "bench", "a", "", "near_zero")}
    assert_store_is_the_rule(con)


# ------------------------------------------------------------------------------------------ predictions
def _over_the_rule(con, view: str) -> str:
    """``view``'s SQL reading the rule wherever it reads the stored cells (as a temporary view)."""
    (path,) = SQL_DIR.glob(f"[0-9][0-9][0-9]_{view}.sql")
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
    text = re.sub(r"\bcollapsed_cells\b", "collapsed_cells_live", text)
    return text.replace(f"VIEW {view} AS", f"TEMP VIEW {view}_from_rule AS", 1)


def test_predictions_from_the_store_equal_those_from_the_rule(tmp_path):
    summary = generate_tree(tmp_path / "tree", n_models=10, seed=2, scale=0.15)
    broken = summary.models[3]
    for path in (tmp_path / "tree" / "planbench").rglob(f"{broken}.csv"):    # a harness failure on two leaves
        if path.parent.name in ("task_3_plan_verification", "task_7_plan_execution"):
            lines = path.read_text().splitlines()
            path.write_text("\n".join([lines[0]] + [",".join(x.split(",")[:1] + ["0.0"] + x.split(",")[2:])
                                                    for x in lines[1:]]) + "\n")
    db = tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    assert {m for m, *_ in stored(con)} == {broken}
    from warehouse.fit import FitRequest, fit_and_store
    fit_and_store(con, FitRequest(count=20, B=10, seed=1, intervals=False, tasks=("abs",)))
    con.execute(_over_the_rule(con, "fit_predictions"))       # predictions picks rows of fit_predictions
    cols = [c for (c,) in con.execute("SELECT column_name FROM (DESCRIBE fit_predictions)").fetchall()]
    ours = con.execute("SELECT * FROM fit_predictions ORDER BY model, target").fetchall()
    rule = con.execute("SELECT * FROM fit_predictions_from_rule ORDER BY model, target").fetchall()
    assert len(ours) == len(rule) == 10 * 4
    for a, b in zip(ours, rule):
        for col, x, y in zip(cols, a, b):
            assert x == pytest.approx(y, abs=1e-12) if isinstance(x, float) else x == y, (col, a, b)
    # the comparison has teeth: with its collapsed cells counted, the broken model's ability is far lower
    ability = "SELECT any_value(ability) FROM predictions WHERE model = ?"
    kept = con.execute(ability, [broken]).fetchone()[0]
    con.execute("BEGIN TRANSACTION")
    con.execute("DELETE FROM collapsed_cells")
    counted = con.execute(ability, [broken]).fetchone()[0]
    con.execute("ROLLBACK")
    assert counted < kept - 0.1
