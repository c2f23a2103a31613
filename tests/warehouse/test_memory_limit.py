"""DuckDB's memory ceiling on warehouse connections (PACE_MEMORY_LIMIT)."""
from __future__ import annotations

from tests.helpers import run_pace, write_csv
from warehouse.connect import connect


def test_connections_carry_the_memory_limit_and_a_bad_value_is_one_line_before_any_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PACE_MEMORY_LIMIT", "1GB")
    con = connect(tmp_path / "w.duckdb")
    assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "953.6 MiB"
    con.close()
    reader = connect(tmp_path / "w.duckdb", read_only=True)
    assert reader.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "953.6 MiB"
    reader.close()
    monkeypatch.delenv("PACE_MEMORY_LIMIT")
    default = connect(tmp_path / "w.duckdb").execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert default.endswith("GiB") and float(default.split()[0]) <= 4.0

    write_csv(tmp_path / "t" / "b" / "M.csv", "id,score,metric_name\nx,1,m\n")
    bad = run_pace("ingest", tmp_path / "t", "--db", tmp_path / "new.duckdb", "--no-progress",
                   env={"PACE_MEMORY_LIMIT": "lots"})
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
    assert "PACE_MEMORY_LIMIT='lots' is not a memory size" in bad.stderr
    negative = run_pace("ingest", tmp_path / "t", "--db", tmp_path / "new.duckdb", "--no-progress",
                        env={"PACE_MEMORY_LIMIT": "-5MB"})           # DuckDB reads it as no limit at all
    assert negative.exit_code == 2 and "PACE_MEMORY_LIMIT='-5MB' is not a memory size" in negative.stderr
    assert not (tmp_path / "new.duckdb").exists()


def test_an_out_of_memory_error_met_anywhere_says_how_to_raise_the_limit(tmp_path):
    """DuckDB's OutOfMemoryException reaches the CLI's last line of defence, not a UserError: it carried no
    hint there (a stranger's PACE_MEMORY_LIMIT=10KB ingest)."""
    write_csv(tmp_path / "t" / "b" / "M.csv", "id,score,metric_name\nx,1,m\n")
    tiny = run_pace("ingest", tmp_path / "t", "--db", tmp_path / "w.duckdb", "--no-progress",
                    env={"PACE_MEMORY_LIMIT": "10KB"})
    assert tiny.exit_code == 1 and "Out of Memory Error" in tiny.stderr and "raise it with PACE_MEMORY_LIMIT" in tiny.stderr
    assert tiny.stderr.startswith("error: Out of Memory Error: ")        # not DuckDB's class name first
    # the warehouse file this ingest created while opening it is gone again (it left 12 KB that was not a
    # warehouse: the next command said "not a pace warehouse")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_an_out_of_memory_error_says_how_to_raise_the_limit():
    from warehouse.cli_options import memory_hint as _memory_hint

    hinted = _memory_hint("the fit failed: Out of Memory Error: failed to allocate data of size 16.0 MiB")
    assert "PACE_MEMORY_LIMIT" in hinted and hinted.startswith("the fit failed: Out of Memory Error")
    assert _memory_hint("no such benchmark 'x'") == "no such benchmark 'x'"


def test_an_ingest_runs_under_the_lower_ingest_limit_unless_one_is_chosen(tmp_path, monkeypatch):
    """The reader's batches sit beside DuckDB during an ingest: DuckDB gets INGEST_MEMORY_LIMIT_MIB then (seen
    from inside the load, by the importer's side hook), the usual limit after; PACE_MEMORY_LIMIT wins."""
    from ingest.load import load_units
    from ingest.report import IngestReport
    from warehouse.connect import INGEST_MEMORY_LIMIT_MIB, ingest_memory

    monkeypatch.delenv("PACE_MEMORY_LIMIT", raising=False)
    con = connect(tmp_path / "w.duckdb")
    limit = lambda: con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]  # noqa: E731
    usual = limit()
    with ingest_memory(con):
        assert limit() == f"{INGEST_MEMORY_LIMIT_MIB / 1024:.1f} GiB" != usual
    assert limit() == usual
    seen = []
    load_units(con, [], IngestReport(str(tmp_path), tree=str(tmp_path)), tmp_path / "lake",
               side=lambda c, removed, written: seen.append(limit()))
    assert seen == [f"{INGEST_MEMORY_LIMIT_MIB / 1024:.1f} GiB"] and limit() == usual
    monkeypatch.setenv("PACE_MEMORY_LIMIT", "1GB")
    with ingest_memory(con):
        assert limit() == "953.6 MiB"
    con.close()
