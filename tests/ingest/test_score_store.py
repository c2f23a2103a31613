"""`scores` as a view over score_rows + score_sources (ingest.score_store): the same rows and the same
answers to writes as the nine-column table it replaced, narrow rows from ingest, and older warehouses
migrated. Synthetic data only."""
from __future__ import annotations

import duckdb
import pytest

from ingest import score_store
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import write_csv
from warehouse.connect import connect, sql_files

# a plain table with the columns and constraints `scores` had as a table: the reference for every write
OLD_TABLE = """CREATE TABLE {name} (
    model VARCHAR NOT NULL, benchmark VARCHAR NOT NULL, subdir VARCHAR NOT NULL, instance_id VARCHAR NOT NULL,
    score DOUBLE, metric_name VARCHAR, origin VARCHAR NOT NULL CHECK (origin IN ('ingest', 'runner')),
    source_ref VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL)"""
ROWS = ("INSERT INTO {name} VALUES "
        "('A', 'b', 'x', 'i1', 1, 'acc', 'ingest', 'b/x/A.csv', TIMESTAMP '2025-01-01'), "
        "('A', 'b', 'x', 'i2', 0, 'acc', 'ingest', 'b/x/A.csv', TIMESTAMP '2025-01-01'), "
        "('B', 'b', 'x', 'i1', NULL, 'acc', 'ingest', 'b/x/B.csv', TIMESTAMP '2025-01-01'), "
        "('B', 'g', '', 'g1', 0.5, 'r', 'runner', 'run:1', TIMESTAMP '2025-01-02')")
WRITES = [
    ("UPDATE {name} SET score = 0.25 WHERE model = 'A' AND instance_id = 'i2'", None),
    ("UPDATE {name} AS t SET model = ? || '-2', metric_name = upper(t.metric_name) WHERE t.benchmark = ?", ["B", "g"]),
    ("DELETE FROM {name} WHERE score IS NULL", None),
    ("INSERT INTO {name} SELECT model, benchmark, subdir, 'i3', 1, metric_name, 'runner', 'run:2', recorded_at "
     "FROM {name} WHERE model = ?", ["A"]),
    ("DELETE FROM {name} AS t USING (SELECT 'i1' AS id) AS q WHERE t.instance_id = q.id AND t.origin = 'ingest'",
     None),
    ("UPDATE {name} SET score = score + 1", None),
]


def _store() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for path in sql_files():
        if path.name.startswith("004_"):
            con.execute(path.read_text())
    con.execute(OLD_TABLE.format(name="reference"))
    return con


def _rows(con, name: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr)


def test_writes_of_the_view_do_what_they_did_to_the_table():
    con = _store()
    con.execute(ROWS.format(name="reference"))
    score_store.execute(con, ROWS.format(name="scores"))
    assert _rows(con, "scores") == _rows(con, "reference")
    for statement, params in WRITES:
        want = con.execute(statement.format(name="reference"), params).fetchall()[0][0]
        got = score_store.execute(con, statement.format(name="scores"), params).fetchall()[0][0]
        assert got == want, statement
        assert _rows(con, "scores") == _rows(con, "reference"), statement
    # one source per (model, leaf, origin, source_ref, time): constants are stored once
    assert con.execute("SELECT count(*) FROM score_sources WHERE source_id IN (SELECT source_id FROM score_rows)"
                       ).fetchone()[0] == con.execute("SELECT count(*) FROM (SELECT DISTINCT * EXCLUDE "
                                                      "(instance_id, score, metric_name) FROM scores)").fetchone()[0]


@pytest.mark.parametrize("bad", ["('A', 'b', 'x', 'i1', 1, 'acc', 'pasted', 'r', TIMESTAMP '2025-01-01')",
                                 "(NULL, 'b', 'x', 'i1', 1, 'acc', 'ingest', 'r', TIMESTAMP '2025-01-01')",
                                 "('A', 'b', 'x', NULL, 1, 'acc', 'ingest', 'r', TIMESTAMP '2025-01-01')"])
def test_rows_the_table_refused_are_refused_and_nothing_is_stored(bad):
    con = _store()
    with pytest.raises(duckdb.ConstraintException):
        con.execute(f"INSERT INTO reference VALUES {bad}")
    with pytest.raises(duckdb.ConstraintException):
        score_store.execute(con, f"INSERT INTO scores VALUES {bad}")
    assert con.execute("SELECT (SELECT count(*) FROM score_rows) + (SELECT count(*) FROM score_sources)"
                       ).fetchone()[0] == 0


def test_a_script_runs_its_writes_of_scores_in_order():
    con = _store()
    score_store.execute(con, ROWS.format(name="scores"))
    last = score_store.execute_script(con, "DELETE FROM scores WHERE model = 'A'; "
                                           "UPDATE scores SET score = 1 WHERE model = 'B'; "
                                           "SELECT count(*), sum(score) FROM scores")
    assert last.fetchall() == [(2, 2.0)]


def test_ingest_stores_one_source_per_file_and_narrow_rows_in_storage_order(tmp_path):
    root = tmp_path / "t"
    for model in ("M2", "M1", "M3"):
        for leaf in ("src/a", "src/b", "gaia"):
            write_csv(root / leaf / f"{model}.csv", "id,score,metric_name\n" +
                      "".join(f"{leaf.replace('/', '-')}-{i},{i % 2},acc\n" for i in range(5)))
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, root, tmp_path / "lake")
    sources = con.execute("SELECT source_id, model, benchmark, subdir, origin, source_ref FROM score_sources "
                          "ORDER BY source_id").fetchall()
    assert {s[5] for s in sources} == {p for (p,) in con.execute("SELECT path FROM score_files").fetchall()}
    # ids follow the storage order (ingest.load._storage_order: one block of models here, leaf by leaf),
    # so the rows of a block of models hold one range of ids
    assert [s[1:4] for s in sources] == sorted([s[1:4] for s in sources], key=lambda k: (k[1], k[2], k[0]))
    assert [s[0] for s in sources] == list(range(sources[0][0], sources[0][0] + 9))
    assert con.execute("SELECT count(*), count(DISTINCT source_id) FROM score_rows").fetchone() == (45, 9)
    row = con.execute("SELECT * EXCLUDE (recorded_at) FROM scores WHERE model = 'M1' AND instance_id = 'src-a-3'"
                      ).fetchone()
    assert row == ("M1", "src", "a", "src-a-3", 1.0, "acc", "ingest", "src/a/M1.csv")
    # a changed file replaces its source and rows; the others keep theirs
    write_csv(root / "src" / "a" / "M1.csv", "id,score,metric_name\nsrc-a-0,0.5,acc\n")
    kept = con.execute("SELECT source_id FROM score_sources WHERE source_ref <> 'src/a/M1.csv' ORDER BY 1").fetchall()
    ingest_tree(con, root, tmp_path / "lake")
    assert con.execute("SELECT source_id FROM score_sources WHERE source_ref <> 'src/a/M1.csv' ORDER BY 1"
                       ).fetchall() == kept
    assert con.execute("SELECT count(*) FROM score_sources WHERE source_ref = 'src/a/M1.csv'").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 41
    assert lake_drift(con, tmp_path / "lake") == {}


def test_a_warehouse_with_the_nine_column_table_is_migrated_on_open(tmp_path):
    db = tmp_path / "w.duckdb"
    root = tmp_path / "t"
    write_csv(root / "src" / "a" / "M1.csv", "id,score,metric_name\nx,1,acc\ny,,acc\n")
    con = connect(db)
    ingest_tree(con, root, tmp_path / "lake")
    score_store.execute(con, "INSERT INTO scores VALUES ('M2', 'src', 'a', 'x', 0.5, 'acc', 'runner', 'run:r', "
                             "TIMESTAMP '2025-01-01')")
    before = _rows(con, "scores")
    # as an older pace left it: `scores` a table, no score_rows / score_sources, another schema stamp
    con.execute(OLD_TABLE.format(name="old") + "; INSERT INTO old SELECT * FROM scores")
    con.execute("DROP VIEW scores; DROP TABLE score_rows; DROP TABLE score_sources; ALTER TABLE old RENAME TO scores")
    con.execute("DELETE FROM pace_meta WHERE key = 'schema'")
    con.close()
    con = connect(db)
    assert _rows(con, "scores") == before
    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_name IN "
                             "('scores', 'score_rows', 'score_sources', 'scores_before_sources')").fetchall())
    assert kinds == {"scores": "VIEW", "score_rows": "BASE TABLE", "score_sources": "BASE TABLE"}
    report = ingest_tree(con, root, tmp_path / "lake")
    assert report.files_unchanged == 1 and _rows(con, "scores") == before
