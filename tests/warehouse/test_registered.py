"""warehouse.registered: Arrow tables named for a block, and the block's own error kept."""
import duckdb
import pyarrow as pa
import pytest

from warehouse.registered import registered


def test_tables_are_visible_inside_the_block_only():
    con = duckdb.connect()
    with registered(con, lhs=pa.table({"x": [1, 2]}), rhs=pa.table({"x": [2, 3]})):
        assert con.execute("SELECT count(*) FROM lhs JOIN rhs USING (x)").fetchall() == [(1,)]
    for name in ("lhs", "rhs"):
        with pytest.raises(duckdb.CatalogException):
            con.execute(f"SELECT * FROM {name}")


def test_an_error_inside_a_transaction_is_the_one_raised():
    """After an error, DuckDB refuses every statement of the transaction, unregistering included: that
    'Current transaction is aborted' replaced the cause (an ingest out of memory said only that)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.ConstraintException):
        with registered(con, incoming=pa.table({"k": [1, 1]})):
            con.execute("INSERT INTO t SELECT k FROM incoming")
    with pytest.raises(duckdb.TransactionException):      # what unregistering met there
        con.unregister("incoming")
    con.execute("ROLLBACK")
    con.unregister("incoming")                             # harmless once the transaction is over


def test_an_error_unregistering_after_a_clean_block_is_raised():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.TransactionException):
        with registered(con, incoming=pa.table({"k": [1]})):
            with pytest.raises(duckdb.ConstraintException):
                con.execute("INSERT INTO t VALUES (1), (1)")
    con.execute("ROLLBACK")
