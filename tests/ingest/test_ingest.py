"""Ingest: layout, strict parsing, idempotence, atomicity, anomalies."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ingest.errors import IngestError
from ingest.load import ingest_tree
from tests.helpers import write_csv
from warehouse.connect import connect


def _open(tmp_path: Path):
    db = tmp_path / "w.duckdb"
    return connect(db), tmp_path / "lake"


def _snapshot(con, lake: Path) -> tuple:
    """Everything a failed ingest must leave untouched: table contents and lake bytes."""
    tables = tuple(
        tuple(con.execute(f"SELECT * EXCLUDE ({ts}) FROM {t} ORDER BY ALL").fetchall())
        for t, ts in (("scores", "recorded_at"), ("score_files", "ingested_at")))
    files = tuple(sorted((str(p.relative_to(lake)), hashlib.sha256(p.read_bytes()).hexdigest())
                         for p in lake.rglob("*") if p.is_file())) if lake.exists() else ()
    return tables + (files,)


def test_ingest_small_tree_rows_lake_and_views(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    report = ingest_tree(con, small_tree, lake)
    assert report.files == 6 and report.rows == 12 and report.leaves == 3
    assert report.models == ["M1", "M2"]
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 12
    # lake: hive partitions by benchmark, same rows
    parts = sorted(p.name for p in (lake / "scores").iterdir())
    assert parts == ["benchmark=gaia", "benchmark=src"]
    assert sum(pq.read_table(p).num_rows for p in (lake / "scores").rglob("*.parquet")) == 12
    means = dict(con.execute("SELECT model, mean FROM target_means WHERE target = 'gaia'").fetchall())
    assert means == {"M1": 1.0, "M2": 0.5}


def test_reingest_unchanged_is_noop_and_changed_file_replaces_its_rows(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    ingest_tree(con, small_tree, lake)
    before = _snapshot(con, lake)
    again = ingest_tree(con, small_tree, lake)
    assert (again.files_unchanged, again.rows_written, again.changed) == (6, 0, False)
    assert _snapshot(con, lake) == before
    write_csv(small_tree / "src" / "leaf_a" / "M1.csv", "id,score,metric_name\nx1,0.25,acc\nx3,1,acc\n")
    changed = ingest_tree(con, small_tree, lake)
    assert (changed.files_changed, changed.rows_written, changed.rows_removed) == (1, 2, 2)
    rows = con.execute("SELECT instance_id, score FROM scores WHERE model='M1' AND subdir='leaf_a' ORDER BY 1"
                       ).fetchall()
    assert rows == [("x1", 0.25), ("x3", 1.0)]
    # only that file's rows changed
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 12


def test_disappeared_file_reported_then_pruned(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    ingest_tree(con, small_tree, lake)
    (small_tree / "src" / "leaf_b" / "M2.csv").unlink()
    report = ingest_tree(con, small_tree, lake)
    assert report.files_disappeared == 1
    assert any(a.kind == "disappeared_file" and a.where == "src/leaf_b/M2.csv" for a in report.anomalies)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 12
    pruned = ingest_tree(con, small_tree, lake, prune=True)
    assert pruned.files_pruned == 1
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 10
    assert con.execute("SELECT count(*) FROM score_files").fetchone()[0] == 5


def test_duplicates_first_kept_and_null_scores_counted(tmp_path):
    root = tmp_path / "t"
    write_csv(root / "b" / "M.csv", "id,score,metric_name\r\na,0.5,m\r\nb,,m\r\na,1.0,m\r\nc,oops,m\r\nd,nan,m\r\n")
    con, lake = _open(tmp_path)
    report = ingest_tree(con, root, lake)
    rows = dict(con.execute("SELECT instance_id, score FROM scores").fetchall())
    assert rows == {"a": 0.5, "b": None, "c": None, "d": None}   # never silently 0
    n_dup, n_null = con.execute("SELECT n_duplicates, n_null_scores FROM score_files").fetchone()
    assert (n_dup, n_null) == (1, 3)
    kinds = {a.kind for a in report.anomalies}
    assert {"duplicate_ids", "null_scores"} <= kinds


def test_legacy_two_column_files(tmp_path):
    root = tmp_path / "t"
    write_csv(root / "b" / "M.csv", "id,score\nq1,1\nq2,0\n")
    write_csv(root / "b" / "N.csv", "id,score\n0.5,q1\n1,q2\n")   # written swapped: numbers in the id column
    con, lake = _open(tmp_path)
    ingest_tree(con, root, lake)
    rows = con.execute("SELECT model, instance_id, score, metric_name FROM scores ORDER BY 1, 2").fetchall()
    assert rows == [("M", "q1", 1.0, None), ("M", "q2", 0.0, None), ("N", "q1", 0.5, None), ("N", "q2", 1.0, None)]
    layouts = dict(con.execute("SELECT model, layout FROM score_files").fetchall())
    assert layouts == {"M": "id,score", "N": "id,score (swapped)"}


BAD_INPUTS = {
    # kind: (relative path, bytes, expected message fragment, expected line)
    "wrong header": ("b/M.csv", b"name,value,metric\nx,1,m\n", "unexpected header", 1),
    "ragged row": ("b/M.csv", b"id,score,metric_name\nx,1,m\ny,0,m,extra\n", "4 fields", 3),
    "short row": ("b/M.csv", b"id,score,metric_name\nx,1,m\ny,0\n", "2 fields", 3),
    "bad encoding": ("b/M.csv", b"id,score,metric_name\nx,1,m\n\xff\xfe,0,m\n", "UTF-8", 3),
    "binary garbage": ("b/M.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary", 3),
    "empty file": ("b/M.csv", b"", "empty file", 1),
    "header only": ("b/M.csv", b"id,score,metric_name\n", "no rows", 2),
    "empty instance id": ("b/M.csv", b"id,score,metric_name\nx,1,m\n ,0,m\n", "empty instance id", 3),
    "csv in root": ("M.csv", b"id,score,metric_name\nx,1,m\n", "unknown layout depth", None),
    "too deep": ("b/s/deeper/M.csv", b"id,score,metric_name\nx,1,m\n", "unknown layout depth", None),
    "mixed depth": ("good/sub/M.csv", b"id,score,metric_name\nx,1,m\n", "unknown layout depth", None),
    "newline in quoted id": ("b/M.csv", b'id,score,metric_name\nw,1,m\n"x\ny",1,m\n', "line break", 3),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_names_file_and_line_and_changes_nothing(tmp_path, small_tree, kind):
    con, lake = _open(tmp_path)
    ingest_tree(con, small_tree, lake)
    before = _snapshot(con, lake)
    # a good new file that sorts before the bad one must not be written either
    write_csv(small_tree / "aaa" / "M1.csv", "id,score,metric_name\nz,1,m\n")
    rel, data, fragment, line = BAD_INPUTS[kind]
    if kind == "mixed depth":
        write_csv(small_tree / "good" / "M1.csv", "id,score,metric_name\nx,1,m\n")
    bad = write_csv(small_tree / rel, data)
    with pytest.raises(IngestError) as info:
        ingest_tree(con, small_tree, lake)
    err = info.value
    assert fragment in err.message
    assert Path(err.path).name == bad.name
    if line is not None:
        assert err.line == line and f":{line}:" in str(err)
    assert _snapshot(con, lake) == before


def test_path_that_is_not_a_directory(tmp_path):
    con, lake = _open(tmp_path)
    f = write_csv(tmp_path / "file.csv", "id,score,metric_name\n")
    with pytest.raises(IngestError, match="not a directory"):
        ingest_tree(con, f, lake)
    with pytest.raises(IngestError, match="no such directory"):
        ingest_tree(con, tmp_path / "missing", lake)


def test_strict_turns_anomalies_into_errors_and_writes_nothing(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    write_csv(small_tree / "src" / "leaf_a" / "M3.csv", "id,score,metric_name\nx1,1.5,acc\n")
    before = _snapshot(con, lake)
    with pytest.raises(IngestError, match="strict=True"):
        ingest_tree(con, small_tree, lake, strict=True)
    assert _snapshot(con, lake) == before
    report = ingest_tree(con, small_tree, lake)
    kinds = {a.kind for a in report.anomalies}
    assert {"out_of_range", "missing_from_leaf", "differing_ids"} <= kinds


def test_a_second_tree_with_a_new_model_does_not_report_the_first_trees_models_missing(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    ingest_tree(con, small_tree, lake)
    second = tmp_path / "second"
    for leaf in ("src/leaf_a", "src/leaf_b", "gaia"):
        shutil.copy(small_tree / leaf / "M1.csv", (second / leaf).mkdir(parents=True) or second / leaf / "M3.csv")
    shutil.copy(small_tree / "src/leaf_a" / "M1.csv", second / "src/leaf_a" / "M4.csv")      # M4: leaf_a only
    report = ingest_tree(con, second, lake)
    missing = {a.where: a.message for a in report.anomalies if a.kind == "missing_from_leaf"}
    # M1 and M2 have their files from the first tree; only the new M4 lacks two leaves
    assert set(missing) == {"src/leaf_b", "gaia"}, missing
    assert all(m.startswith("1 of 4 models have no file: M4") for m in missing.values()), missing


def test_unknown_model_hint_and_alias(tmp_path, small_tree):
    from warehouse.aliases import add_alias

    (small_tree / "gaia" / "M2.csv").rename(small_tree / "gaia" / "M2-Reasoner.csv")
    con, lake = _open(tmp_path)
    report = ingest_tree(con, small_tree, lake)
    unknown = [a for a in report.anomalies if a.kind == "unknown_model"]
    assert len(unknown) == 1 and "pace alias add M2-Reasoner M2" in unknown[0].message
    assert con.execute("SELECT mean FROM target_means WHERE model='M2'").fetchone()[0] is None   # no target row
    assert add_alias(con, "M2-Reasoner", "M2").rows == 2
    assert con.execute("SELECT mean FROM target_means WHERE model='M2'").fetchone()[0] == 0.5
    # a re-ingest keeps the alias: unchanged file, same model
    again = ingest_tree(con, small_tree, lake)
    assert again.files_unchanged == 6 and not [a for a in again.anomalies if a.kind == "unknown_model"]


def test_key_is_unique_per_model_leaf_instance(tmp_path, small_tree):
    con, lake = _open(tmp_path)
    ingest_tree(con, small_tree, lake)
    ingest_tree(con, small_tree, lake)
    dupes = con.execute("""SELECT count(*) FROM (SELECT model, benchmark, subdir, instance_id FROM scores
                           GROUP BY ALL HAVING count(*) > 1)""").fetchone()[0]
    assert dupes == 0


def test_a_file_of_another_version_gets_no_alias_hint(tmp_path, small_tree):
    """GLM-5.1's agentic runs are not GLM-5's: a name with other version numbers is another model, so
    the unknown-model anomaly offers no alias to merge them (a prefix and a close spelling both would)."""
    (small_tree / "gaia" / "M2.csv").rename(small_tree / "gaia" / "M2.1.csv")
    con, lake = _open(tmp_path)
    report = ingest_tree(con, small_tree, lake)
    unknown = [a for a in report.anomalies if a.kind == "unknown_model"]
    assert len(unknown) == 1 and "M2.1" in unknown[0].message
    assert "pace alias add" not in unknown[0].message
