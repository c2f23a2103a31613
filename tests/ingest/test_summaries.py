"""Summaries kept at write time (ingest.summaries): `pace status` and `pace doctor --check` read them and
the lake records instead of scanning scores; a scan (`--scan`, or a repair) finds what other DuckDB clients
wrote; a lake partition whose files changed is read again; a mark is reported and recomputed."""
from __future__ import annotations

import json
import shutil

import duckdb

from ingest import summaries
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import run_pace, write_csv
from warehouse.connect import connect
from ingest import score_store


def _tree(root):
    for model, score in (("A", 0.1), ("B", 0.9), ("C", 0.5)):
        write_csv(root / "src" / "leaf" / f"{model}.csv", f"id,score,metric_name\na,{score},acc\nb,1,acc\nc,0,acc\n")
        write_csv(root / "gaia" / f"{model}.csv", f"id,score,metric_name\ng,{score},acc\nh,1,acc\n")
    return root


def _ingested(tmp_path):
    db = tmp_path / "w.duckdb"
    assert run_pace("ingest", _tree(tmp_path / "t"), "--db", db, "--no-progress").exit_code == 0
    return db


def test_status_and_check_read_the_counts_kept_and_a_scan_finds_an_outside_write(tmp_path):
    db = _ingested(tmp_path)
    status = json.loads(run_pace("status", "--db", db, "--json").stdout)
    assert (status["rows"], status["files"], status["known_models"], status["leaves"]) == (15, 6, 3, 2)
    assert {b["benchmark"]: (b["rows"], b["instances"], b["models"]) for b in status["benchmarks"]
            if b["rows"]} == {"gaia": (6, 2, 3), "src": (9, 3, 3)}
    assert status["lake_drift"] == [] and run_pace("doctor", "--check", "--db", db).exit_code == 0
    raw = duckdb.connect(str(db))                          # another DuckDB client, not pace
    score_store.execute(raw, "DELETE FROM scores WHERE model = 'A' AND benchmark = 'src'")
    raw.close()
    assert json.loads(run_pace("status", "--db", db, "--json").stdout)["rows"] == 15     # counts as kept
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0                    # nothing scanned
    scan = run_pace("doctor", "--check", "--scan", "--db", db, "--json")
    problems = json.loads(scan.stdout)["problems"]
    assert scan.exit_code == 1 and any(p.startswith("summaries: ") and "outside pace" in p for p in problems)
    assert any("src has 9 rows in the lake, 6 in scores" in p for p in problems)
    assert any("miss 3 rows" in p for p in problems)
    fixed = run_pace("doctor", "--db", db)             # exit 1: the missing rows are the user's to reload
    assert fixed.exit_code == 1 and "recomputed the stored summaries" in fixed.stdout and "miss 3 rows" in fixed.stdout
    assert json.loads(run_pace("status", "--db", db, "--json").stdout)["rows"] == 12
    assert run_pace("doctor", "--check", "--scan", "--db", db).exit_code == 1          # the file still misses rows
    assert run_pace("ingest", tmp_path / "t", "--db", db, "--no-progress").exit_code == 0
    assert run_pace("doctor", "--check", "--scan", "--db", db).exit_code == 0


def test_a_lake_partition_whose_files_changed_is_read_again(tmp_path):
    db = _ingested(tmp_path)
    con = connect(db)
    lake = tmp_path / "w.lake"
    assert con.execute("SELECT count(*) FROM lake_partitions").fetchone()[0] == 2
    assert lake_drift(con, lake, stored=True) == {} == lake_drift(con, lake)
    (gaia,) = (lake / "scores" / "benchmark=gaia").glob("*.parquet")
    (src,) = (lake / "scores" / "benchmark=src").glob("*.parquet")
    shutil.copyfile(src, gaia)                             # other rows under gaia's name
    assert set(lake_drift(con, lake, stored=True)) == {"gaia"}
    gaia.write_bytes(b"PAR1 not really")                   # damaged
    assert lake_drift(con, lake, stored=True)["gaia"][1][0] is None
    con.close()
    assert run_pace("doctor", "--db", db).exit_code == 0
    con = connect(db, read_only=True)
    assert lake_drift(con, lake, stored=True) == {} == lake_drift(con, lake)


def test_a_mark_is_reported_by_check_and_recomputed_by_the_doctor(tmp_path):
    db = _ingested(tmp_path)
    con = connect(db)
    summaries.mark_stale(con)
    con.close()
    check = run_pace("doctor", "--check", "--db", db, "--json")
    assert check.exit_code == 1 and [p for p in json.loads(check.stdout)["problems"]
                                     if p.startswith("summaries: out of date")]
    assert run_pace("doctor", "--db", db).exit_code == 0
    con = connect(db, read_only=True, refresh_collapsed=False)
    assert not summaries.is_stale(con) and summaries.drift(con) == {}


def test_a_warehouse_rebuilt_from_its_lake_has_its_summaries(tmp_path):
    db = _ingested(tmp_path)
    db.unlink()
    assert run_pace("doctor", "--from-lake", "--db", db).exit_code == 0
    con = connect(db, read_only=True, refresh_collapsed=False)
    assert not summaries.is_stale(con) and summaries.drift(con) == {}
    assert con.execute("SELECT sum(n_rows) FROM score_counts").fetchone()[0] == 15


def test_a_second_tree_adds_its_counts_and_ingest_reloads_rows_deleted_outside(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, _tree(tmp_path / "t"), tmp_path / "lake")
    write_csv(tmp_path / "u" / "gaia" / "D.csv", "id,score,metric_name\ng,1,acc\n")
    ingest_tree(con, tmp_path / "u", tmp_path / "lake")
    assert summaries.drift(con) == {} and summaries.totals(con)[:2] == (16, 7)
    score_store.execute(con, "DELETE FROM scores WHERE model = 'D'")         # by hand: the counts do not know
    report = ingest_tree(con, tmp_path / "u", tmp_path / "lake")
    assert report.files_reloaded == 1 and summaries.drift(con) == {}


def test_status_counts_models_as_the_models_view_does_and_keeping_a_held_model_keeps_the_stats_in_step(tmp_path):
    from warehouse.aliases import keep_model

    root = _tree(tmp_path / "t")
    write_csv(root / "gaia" / "C.csv", "id,score,metric_name\ng,0.5,acc\nh,1,acc\nz,1,acc\n")   # z: C's alone
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, root, tmp_path / "lake")
    con.execute("BEGIN TRANSACTION")                     # as ingest.noise holds a second spelling
    con.execute("INSERT INTO model_holds VALUES ('C', 'second_spelling', 'B', now())")
    con.execute("INSERT INTO model_metadata (model, index_model, agent, source, source_ref, recorded_at) "
                "VALUES ('OnlyMetadata', 'OnlyMetadata', 'x', 'openhands-index', 'x/metadata.json', now())")
    summaries.refresh(con)
    con.execute("COMMIT")
    assert summaries.totals(con)[2:4] == con.execute(
        "SELECT count(*) FILTER (known), count(*) FILTER (NOT known) FROM models").fetchone() == (2, 2)
    stats = "SELECT instance_id, target_correlation FROM instance_stats ORDER BY ALL"
    held = con.execute(stats).fetchall()
    keep_model(con, "C")                 # C known: gaia's instances gain z, C's target mean changes
    assert summaries.totals(con)[2:4] == (3, 1) and summaries.drift(con) == {} and not summaries.is_stale(con)
    assert con.execute(stats).fetchall() != held


def test_a_failure_deriving_after_the_commit_is_a_note_and_the_lake_still_follows(tmp_path, small_tree, monkeypatch):
    """The rows are committed before the stored summaries are recomputed: an error there (out of memory under
    PACE_MEMORY_LIMIT=40MB, a stranger's) failed the ingest with exit 1 while its rows were stored, left the
    lake's new partitions in staging and made `doctor --check` report 209,924 missing rows from stale counts."""
    import ingest.load as load

    def out_of_memory(con, timed=None):
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block (test)")

    db = tmp_path / "w.duckdb"
    monkeypatch.setattr(load, "refresh_stale_derived", out_of_memory)
    con = connect(db)
    try:
        report = ingest_tree(con, small_tree)
        assert con.execute("SELECT count(*) FROM scores").fetchall() == [(12,)]
        assert summaries.is_stale(con)                                      # marked for the next open
        assert lake_drift(con, tmp_path / "w.lake") == {}                   # moved in from staging
    finally:
        con.close()
    assert any("not recomputed (Out of Memory Error: could not allocate block (test))" in n for n in report.notes)
    check = run_pace("doctor", "--check", "--db", db)
    assert check.exit_code == 1 and "summaries: out of date" in check.stdout and "miss" not in check.stdout, check
    assert run_pace("status", "--db", db).exit_code == 0                   # this open recomputes them
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
