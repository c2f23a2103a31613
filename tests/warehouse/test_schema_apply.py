"""The schema is applied in one transaction: a schema file that fails leaves the file as it was."""
from __future__ import annotations

import duckdb
import pytest

import warehouse.connect as connect_module
from warehouse.connect import connect


def test_a_failing_schema_file_leaves_a_new_warehouse_without_any_object(tmp_path, monkeypatch):
    broken = tmp_path / "999_broken.sql"
    broken.write_text("CREATE TABLE half_way (x INTEGER);\nSELECT no_such_column FROM half_way;\n")
    files = connect_module.sql_files()
    monkeypatch.setattr(connect_module, "sql_files", lambda: [*files, broken])
    db = tmp_path / "pace.duckdb"
    with pytest.raises(RuntimeError, match="999_broken.sql"):
        connect(db, create=True)
    assert not db.exists() and not db.with_name(db.name + ".wal").exists()     # the file it created is gone
    other = tmp_path / "other.duckdb"                  # a file that existed keeps everything it had
    duckdb.connect(str(other)).execute("CREATE TABLE mine AS SELECT 1 AS x").close()
    with pytest.raises(RuntimeError, match="999_broken.sql"):
        connect(other, create=True)
    con = duckdb.connect(str(other), read_only=True)
    try:
        assert con.execute("SELECT x FROM mine").fetchall() == [(1,)]
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
                           ).fetchone()[0] == 1                 # no object of the schema, half or whole
    finally:
        con.close()
    monkeypatch.undo()
    con = connect(db, create=True)                     # the next open applies the whole schema
    try:
        assert con.execute("SELECT count(*) FROM score_rows").fetchone()[0] == 0
    finally:
        con.close()
