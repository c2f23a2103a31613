"""The batch reader (DuckDB's CSV reader over many files) against the per-file parser: same rows,
same counts, same errors, on every way a file can be read."""
from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pyarrow as pa
import pytest

import ingest.bulk as bulk
from ingest.csvfile import parse_bytes, parse_scores
from ingest.errors import IngestError
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import write_csv
from warehouse.connect import connect

# file -> (bytes, how the batch reader reads it)
FILES = {
    "src/a/M1.csv": (b"id,score,metric_name\nx,1,m\ny,0,m\nz,0.25,m\n", "fast"),
    "src/a/M2.csv": (b"id,score,metric_name\r\nx,0,m\r\ny,1,m\r\n", "fast"),
    "src/a/M3.csv": (b"id,score,metric_name\nx,1,m\ny,,m\nz,oops,m\nw,+-1,m\nv,inf,m\n", "fast"),
    "src/a/M4.csv": (b'id,score,metric_name\n"q,1",0.5,"m,n"\n"a""b",1,\n', "fast"),
    "src/a/M5.csv": ("id,score,metric_name\n  x , 1 ,m \n\ty\t,\u20090.5\u2009,m\n\u00e9,\u0661,m\n".encode(), "careful"),
    "src/a/M6.csv": (b"\xef\xbb\xbfid,score,metric_name\nx,1,m\n", "careful"),        # a byte-order mark
    "src/b/M1.csv": (b"id,score,metric_name\n\nx,1,m\n\ny,0,m\n\n", "fast"),          # blank lines
    "src/b/M2.csv": (b'id,score,metric_name\nx,1,"m\nn"\n', "fast"),                 # a quoted line break
    "src/b/M3.csv": (b'id,score,metric_name\n"a"x,1,m\ny,0,m\n', "fast"),             # DuckDB refuses, valid
    "src/b/M4.csv": (b"id,score,metric_name\nx,1,m\r\ny,0,m\n", "reference"),        # mixed line endings
    "src/b/M5.csv": (b"id,score\n0.5,q1\n1,q2\n", "reference"),                      # legacy, swapped
    "src/b/M6.csv": (b"id,score,metric_name\nx,1,m\ny,0,m\nx,0,m\ny,0,m\nz,1,m\n", "fast"),   # repeats
    "gaia/M1.csv": (b"id,score,metric_name\n" + b"".join(b"%d,0,r\n" % i for i in range(3))
                    + b"".join(b"%d,1,r\n" % i for i in range(3)), "fast"),          # two whole runs
    "gaia/M2.csv": (b"id,score,metric_name\ng0,1,r\ng1,1,r\ng2,0,r\n", "fast"),
}


def _tree(root: Path) -> Path:
    for rel, (data, _) in FILES.items():
        write_csv(root / rel, data)
    return root


def _sorted(rows) -> list[tuple]:
    return sorted(rows, key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


def _rows(con, path: str) -> list[tuple]:
    return _sorted(con.execute("SELECT instance_id, score, metric_name FROM scores WHERE source_ref = ?",
                               [path]).fetchall())


@pytest.mark.parametrize("duplicates", ["first", "last"])
def test_every_route_gives_the_per_file_parsers_rows(tmp_path, monkeypatch, duplicates):
    monkeypatch.setattr(bulk, "BATCH_FILES", 3)                # several batches, one file per leaf and batch
    root = _tree(tmp_path / "t")
    assert {rel: bulk.probe(root / rel).route for rel in FILES} == {rel: r for rel, (_, r) in FILES.items()}
    con = connect(tmp_path / "w.duckdb")
    report = ingest_tree(con, root, tmp_path / "lake", duplicates=duplicates)
    for rel, (data, _) in FILES.items():
        expected = parse_bytes(rel, data, duplicates)
        assert _rows(con, rel) == _sorted(tuple(r.values()) for r in expected.table.to_pylist()), rel
        stored = con.execute("""SELECT n_rows, n_duplicates, n_null_scores, layout, n_runs,
                                       coalesce(run_means, []), coalesce(conflicting_ids, [])
                                FROM score_files WHERE path = ?""", [rel]).fetchone()
        assert stored == (expected.table.num_rows, expected.n_duplicates, expected.n_null_scores, expected.layout,
                          expected.n_runs, expected.run_means or [], expected.conflicting_ids or []), rel
    assert report.files_per_file == 5           # blank lines, quoted line break, refused, mixed, legacy
    assert report.rows_written == sum(parse_bytes(r, d, duplicates).table.num_rows for r, (d, _) in FILES.items())
    assert lake_drift(con, tmp_path / "lake") == {}
    kinds = {(a.kind, a.where) for a in report.anomalies}
    assert {("repeated_runs", "gaia/M1.csv"), ("conflicting_duplicates", "src/b/M6.csv"),
            ("null_scores", "src/a/M3.csv")} <= kinds


def test_fast_route_scores_follow_the_per_file_rule(tmp_path):
    """DuckDB's cast on the fast route gives what parse_scores gives (Python float, finite, else NULL)
    for every string of up to 4 characters of "01.e+-_" and some words."""
    texts = sorted({"".join(t) for n in range(1, 5) for t in itertools.product("01.e+-_", repeat=n)}
                   | {"inf", "-inf", "nan", "NaN", "Infinity", "1e400", "1e-400", "1_000", "+-1", "0x10", "1d5"})
    data = ("id,score,metric_name\n" + "".join(f"i{k},{s},m\n" for k, s in enumerate(texts))).encode()
    root = tmp_path / "t"
    write_csv(root / "src" / "M.csv", data)
    assert bulk.probe(root / "src" / "M.csv").route == "fast"
    con = connect(tmp_path / "w.duckdb")
    assert ingest_tree(con, root, tmp_path / "lake").files_per_file == 0     # DuckDB read it
    got = dict(con.execute("SELECT instance_id, score FROM scores").fetchall())
    expected = parse_scores(pa.chunked_array([pa.array(texts)])).to_pylist()
    assert [got[f"i{k}"] for k in range(len(texts))] == expected
    assert got[f"i{texts.index('+-1')}"] is None and got[f"i{texts.index('1_000')}"] == 1000.0


BAD_IN_A_BATCH = {
    # file bytes, message fragment, line: each read by DuckDB first, then named by the per-file parser
    "ragged": (b"id,score,metric_name\nx,1,m\ny,0,m,extra\n", "4 fields", 3),
    "short": (b"id,score,metric_name\nx,1,m\ny,0\n", "2 fields", 3),
    "empty id": (b"id,score,metric_name\nx,1,m\n,0,m\n", "empty instance id", 3),
    "padded empty id": (b"id,score,metric_name\nx,1,m\n  ,0,m\n", "empty instance id", 3),
    "header only": (b"id,score,metric_name\n", "no rows", 2),
    "quoted line break in id": (b'id,score,metric_name\nw,1,m\n"x\ny",1,m\n', "line break", 3),
    "repeat with --duplicates error": (b"id,score,metric_name\nx,1,m\ny,1,m\nx,0,m\n", "repeats an earlier id", 4),
}


def _snapshot(con, lake: Path) -> tuple:
    tables = tuple(tuple(con.execute(f"SELECT * EXCLUDE ({ts}) FROM {t} ORDER BY ALL").fetchall())
                   for t, ts in (("scores", "recorded_at"), ("score_files", "ingested_at")))
    files = tuple(sorted((str(p.relative_to(lake)), hashlib.sha256(p.read_bytes()).hexdigest())
                         for p in lake.rglob("*") if p.is_file())) if lake.exists() else ()
    return tables + (files,)


@pytest.mark.parametrize("kind", sorted(BAD_IN_A_BATCH))
def test_a_bad_file_in_a_later_batch_names_its_line_and_writes_nothing(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(bulk, "BATCH_FILES", 2)
    root = tmp_path / "t"
    for m in range(5):
        write_csv(root / "src" / "leaf" / f"M{m}.csv", f"id,score,metric_name\nx,{m / 5},m\ny,1,m\n")
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, root, tmp_path / "lake")
    before = _snapshot(con, tmp_path / "lake")
    for m in range(5):                                          # every file changes: all are read again
        write_csv(root / "src" / "leaf" / f"M{m}.csv", f"id,score,metric_name\nx,{m / 4},m\ny,0,m\n")
    data, fragment, line = BAD_IN_A_BATCH[kind]
    write_csv(root / "src" / "leaf" / "M9.csv", data)             # last in tree order: a later batch
    policy = "error" if "duplicates" in kind else "first"
    with pytest.raises(IngestError) as info:
        ingest_tree(con, root, tmp_path / "lake", duplicates=policy)
    assert fragment in info.value.message and info.value.path.endswith("M9.csv") and info.value.line == line
    assert _snapshot(con, tmp_path / "lake") == before


def test_a_file_that_changes_while_it_is_ingested_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "t"
    for m in range(3):
        write_csv(root / "src" / f"M{m}.csv", "id,score,metric_name\nx,1,m\n")
    original = bulk.BatchReader.read

    def read_after_an_edit(self, batch):
        write_csv(root / "src" / "M1.csv", "id,score,metric_name\nx,0,m\ny,1,m\nz,1,m\n")
        return original(self, batch)

    monkeypatch.setattr(bulk.BatchReader, "read", read_after_an_edit)
    con = connect(tmp_path / "w.duckdb")
    with pytest.raises(IngestError, match="M1.csv: changed while it was being ingested"):
        ingest_tree(con, root, tmp_path / "lake")
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 0
    assert not (tmp_path / "lake").exists() or not any((tmp_path / "lake").rglob("*.parquet"))


# ---------------------------------------------------------------------------------------- the lake
def _model_tree(root: Path, models: dict[str, float]) -> Path:
    for model, score in models.items():
        write_csv(root / "src" / "leaf" / f"{model}.csv", f"id,score,metric_name\na,{score},acc\nb,1,acc\n")
        write_csv(root / "gaia" / f"{model}.csv", f"id,score,metric_name\ng,{score},acc\n")
    return root


def _lake_files(lake: Path) -> dict[str, bytes]:
    return {str(p.relative_to(lake)): p.read_bytes() for p in sorted(lake.rglob("*.parquet"))}


def test_a_new_models_rows_join_the_lake_as_new_files_and_a_change_rewrites_the_partition(tmp_path):
    lake = tmp_path / "lake"
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, _model_tree(tmp_path / "first", {"A": 0.1, "B": 0.9}), lake)
    before = _lake_files(lake)
    ingest_tree(con, _model_tree(tmp_path / "second", {"C": 0.5}), lake)
    after = _lake_files(lake)
    assert {k: after[k] for k in before} == before                 # nothing rewritten
    assert sorted(k.split("/")[1] for k in set(after) - set(before)) == ["benchmark=gaia", "benchmark=src"]
    assert lake_drift(con, lake) == {}
    # a changed file of the first tree: its benchmark's partition is rewritten as one file again
    write_csv(tmp_path / "first" / "gaia" / "A.csv", "id,score,metric_name\ng,0.3,acc\n")
    ingest_tree(con, tmp_path / "first", lake)
    assert len(list((lake / "scores" / "benchmark=gaia").glob("*.parquet"))) == 1
    assert len(list((lake / "scores" / "benchmark=src").glob("*.parquet"))) == 2
    assert lake_drift(con, lake) == {}


def test_file_rows_that_replace_runs_rewrite_the_partition(tmp_path):
    lake = tmp_path / "lake"
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, _model_tree(tmp_path / "first", {"A": 0.1, "B": 0.9}), lake)
    con.execute("INSERT INTO scores VALUES ('C', 'gaia', '', 'g', 1, 'acc', 'runner', 'run:x', now())")
    from ingest.lake import mark_pending, sync_lake
    mark_pending(con, ["gaia"])
    sync_lake(con, lake=lake)
    report = ingest_tree(con, _model_tree(tmp_path / "second", {"C": 0.5}), lake)
    assert any(a.kind == "replaced_rows" for a in report.anomalies)
    assert len(list((lake / "scores" / "benchmark=gaia").glob("*.parquet"))) == 1
    assert len(list((lake / "scores" / "benchmark=src").glob("*.parquet"))) == 2
    assert lake_drift(con, lake) == {}


def test_a_kill_before_the_new_files_land_is_repaired_on_the_next_open(tmp_path, monkeypatch):
    import ingest.load as load

    lake, db = tmp_path / "lake", tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, _model_tree(tmp_path / "first", {"A": 0.1, "B": 0.9}), lake)

    class Killed(BaseException):
        pass

    def killed(*args, **kwargs):
        raise Killed()

    monkeypatch.setattr(load, "swap_lake", killed)
    with pytest.raises(Killed):
        ingest_tree(con, _model_tree(tmp_path / "second", {"C": 0.5}), lake)
    assert set(lake_drift(con, lake)) == {"gaia", "src"}           # committed, lake behind
    con.close()
    monkeypatch.undo()
    con = connect(db)
    assert lake_drift(con, lake) == {}
