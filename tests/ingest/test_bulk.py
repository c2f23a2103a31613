"""The batch reader (files joined and parsed by one Arrow CSV call) against the per-file parser: same
rows, same counts, same errors, on every way a file can be read."""
from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ingest.bulk as bulk
from ingest.csvfile import parse_bytes, parse_scores
from ingest.errors import IngestError
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from tests.helpers import Killed, kill_at, write_csv
from warehouse.connect import connect
from ingest import score_store

# file -> (bytes, how the batch reader reads it)
FILES = {
    "src/a/M1.csv": (b"id,score,metric_name\nx,1,m\ny,0,m\nz,0.25,m\n", "fast"),
    "src/a/M2.csv": (b"id,score,metric_name\r\nx,0,m\r\ny,1,m\r\n", "fast"),
    "src/a/M3.csv": (b"id,score,metric_name\nx,1,m\ny,,m\nz,oops,m\nw,+-1,m\nv,inf,m\n", "fast"),
    "src/a/M4.csv": (b'id,score,metric_name\n"q,1",0.5,"m,n"\n"a""b",1,\n', "reference"),   # quotes
    "src/a/M5.csv": ("id,score,metric_name\n  x , 1 ,m \n\ty\t,\u20090.5\u2009,m\n\u00e9,\u0661,m\n".encode(), "careful"),
    "src/a/M6.csv": (b"\xef\xbb\xbfid,score,metric_name\nx,1,m\n", "careful"),        # a byte-order mark
    "src/b/M1.csv": (b"id,score,metric_name\n\nx,1,m\n\ny,0,m\n\n", "reference"),     # blank lines
    "src/b/M2.csv": (b'id,score,metric_name\nx,1,"m\nn"\n', "reference"),            # a quoted line break
    "src/b/M3.csv": (b'id,score,metric_name\n"a"x,1,m\ny,0,m\n', "reference"),        # a quote inside a value
    "src/b/M4.csv": (b"id,score,metric_name\nx,1,m\r\ny,0,m\n", "fast"),             # mixed line endings
    "src/b/M7.csv": (b"id,score,metric_name\nx,1,m\ry,0,m\n", "reference"),            # a CR-only line ending
    "src/b/M8.csv": (b"id,score,metric_name\r\nx,1,m\r\ny,0.5,m", "fast"),           # no final line break
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
    assert report.files_per_file == 6           # quotes (3), blank lines, CR-only, legacy
    assert report.rows_written == sum(parse_bytes(r, d, duplicates).table.num_rows for r, (d, _) in FILES.items())
    assert lake_drift(con, tmp_path / "lake") == {}
    kinds = {(a.kind, a.where) for a in report.anomalies}
    assert {("repeated_runs", "gaia/M1.csv"), ("conflicting_duplicates", "src/b/M6.csv"),
            ("null_scores", "src/a/M3.csv")} <= kinds


def test_fast_route_scores_follow_the_per_file_rule(tmp_path):
    """The fast route's score rule gives what parse_scores gives (Python float, finite, else NULL) for
    every string of up to 4 characters of "01.e+-_" and some words: Arrow's cast where it takes a
    string (always with Python's value), DuckDB's TRY_CAST for a batch with a string it does not take."""
    texts = sorted({"".join(t) for n in range(1, 5) for t in itertools.product("01.e+-_", repeat=n)}
                   | {"inf", "-inf", "nan", "NaN", "Infinity", "1e400", "1e-400", "1_000", "+-1", "0x10", "1d5"})
    data = ("id,score,metric_name\n" + "".join(f"i{k},{s},m\n" for k, s in enumerate(texts))).encode()
    root = tmp_path / "t"
    write_csv(root / "src" / "M.csv", data)
    assert bulk.probe(root / "src" / "M.csv").route == "fast"
    con = connect(tmp_path / "w.duckdb")
    assert ingest_tree(con, root, tmp_path / "lake").files_per_file == 0     # read in a joined batch
    got = dict(con.execute("SELECT instance_id, score FROM scores").fetchall())
    expected = parse_scores(pa.chunked_array([pa.array(texts)])).to_pylist()
    assert [got[f"i{k}"] for k in range(len(texts))] == expected
    assert got[f"i{texts.index('+-1')}"] is None and got[f"i{texts.index('1_000')}"] == 1000.0
    taken_by_arrow = 0
    for text in texts:
        try:
            value = pc.cast(pa.array([text]), pa.float64())[0].as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        taken_by_arrow += 1
        assert value == float(text) or (value != value and float(text) != float(text)), text
    assert taken_by_arrow > 100


BAD_IN_A_BATCH = {
    # file bytes, message fragment, line: each read in a joined batch first, then named by the per-file parser
    "ragged": (b"id,score,metric_name\nx,1,m\ny,0,m,extra\n", "4 fields", 3),
    "short": (b"id,score,metric_name\nx,1,m\ny,0\n", "2 fields", 3),
    "empty id": (b"id,score,metric_name\nx,1,m\n,0,m\n", "empty instance id", 3),
    "padded empty id": (b"id,score,metric_name\nx,1,m\n  ,0,m\n", "empty instance id", 3),
    "header only": (b"id,score,metric_name\n", "no rows", 2),
    "quoted line break in id": (b'id,score,metric_name\nw,1,m\n"x\ny",1,m\n', "line break", 3),
    "CR-only line endings": (b"id,score,metric_name\rx,1,m\ry,0,m\r", "unexpected header", 1),
    "ragged lines whose commas add up": (b"id,score,metric_name\nx,1\ny,0,m,extra\n", "2 fields", 2),
    "a whitespace-only line": (b"id,score,metric_name\nx,1,m\n  \ny,0,m\n", "1 fields", 3),
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
    score_store.execute(con, "INSERT INTO scores VALUES ('C', 'gaia', '', 'g', 1, 'acc', 'runner', 'run:x', now())")
    # runner rows the file does not hold (another instance of C, the same instance of another model) stay
    score_store.execute(con, "INSERT INTO scores VALUES ('C', 'gaia', '', 'h', 1, 'acc', 'runner', 'run:x', now()), "
                             "('D', 'gaia', '', 'g', 0, 'acc', 'runner', 'run:x', now())")
    from ingest.lake import mark_pending, sync_lake
    mark_pending(con, ["gaia"])
    sync_lake(con, lake=lake)
    report = ingest_tree(con, _model_tree(tmp_path / "second", {"C": 0.5}), lake)
    assert any(a.kind == "replaced_rows" for a in report.anomalies)
    assert sorted(con.execute("SELECT model, instance_id, score, origin FROM scores WHERE benchmark = 'gaia' AND "
                              "model IN ('C', 'D')").fetchall()) == [("C", "g", 0.5, "ingest"), ("C", "h", 1.0, "runner"),
                                                                    ("D", "g", 0.0, "runner")]
    assert len(list((lake / "scores" / "benchmark=gaia").glob("*.parquet"))) == 1
    assert len(list((lake / "scores" / "benchmark=src").glob("*.parquet"))) == 2
    assert lake_drift(con, lake) == {}


def test_a_kill_before_the_new_files_land_is_repaired_on_the_next_open(tmp_path, monkeypatch):
    import ingest.load as load

    lake, db = tmp_path / "lake", tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, _model_tree(tmp_path / "first", {"A": 0.1, "B": 0.9}), lake)

    kill_at(monkeypatch, load, "swap_lake")
    with pytest.raises(Killed):
        ingest_tree(con, _model_tree(tmp_path / "second", {"C": 0.5}), lake)
    assert set(lake_drift(con, lake)) == {"gaia", "src"}           # committed, lake behind
    con.close()
    monkeypatch.undo()
    con = connect(db)
    assert lake_drift(con, lake) == {}


# ------------------------------------------------------------- bulk path == per-file path, whole tree
def _per_file_only(monkeypatch):
    """Every file read by the per-file parser (the reference), none in a joined batch."""
    classify = bulk._classify
    monkeypatch.setattr(bulk, "_classify", lambda name, data: ("reference", *classify(name, data)[1:]))


def _inject(root: Path) -> dict[str, str]:
    """Damage a synthetic tree the way real trees are damaged (and in every way a file can still be
    read); returns what was done to which file."""
    files = sorted(p for p in root.rglob("*.csv"))
    done = {}

    def edit(path: Path, change, what):
        data = path.read_bytes()
        eol = b"\r\n" if b"\r\n" in data else b"\n"
        lines = data[:-len(eol)].split(eol)
        path.write_bytes(change(lines, eol))
        done[path.relative_to(root).as_posix()] = what

    def score(line: bytes, value: bytes) -> bytes:
        i, _, m = line.split(b",")
        return b",".join([i, value, m])

    def joined(lines, eol):
        return eol.join(lines) + eol

    # a repeated id block (the first rows again, other scores), a whole second run, non-numeric scores,
    # a score outside [0, 1]
    edit(files[0], lambda ls, e: joined(ls + [score(ls[1], b"0.5"), ls[2]], e), "repeats")
    edit(files[3], lambda ls, e: joined(ls + ls[1:], e), "two runs")
    edit(files[5], lambda ls, e: joined([ls[0], *(score(l, b"n/a") if 0 < i < 4 else l
                                                 for i, l in enumerate(ls[1:], 1))], e), "non-numeric")
    edit(files[7], lambda ls, e: joined([ls[0], score(ls[1], b"1.5"), *ls[2:]], e), "out of range")
    # read by the per-file parser: quoted fields, the legacy header, blank lines, a CR-only line end
    edit(files[9], lambda ls, e: joined([ls[0], b'"' + ls[1].replace(b",", b'","') + b'"', *ls[2:]], e), "quoted")
    edit(files[11], lambda ls, e: joined([b"id,score"] + [l.rsplit(b",", 1)[0] for l in ls[1:]], e), "legacy")
    edit(files[13], lambda ls, e: joined(ls[:2] + [b""] + ls[2:], e), "blank line")
    edit(files[15], lambda ls, e: joined(ls[:2], e) + b"\r".join(ls[2:4]) + e + joined(ls[4:], e), "CR line end")
    # read in a joined buffer but trimmed: padding, a byte-order mark, non-ASCII ids; and the other
    # line endings
    edit(files[17], lambda ls, e: joined([ls[0], b" " + score(ls[1], b" 0.25\t"), *ls[2:]], e), "padded")
    edit(files[19], lambda ls, e: b"\xef\xbb\xbf" + joined(ls, e), "byte-order mark")
    edit(files[21], lambda ls, e: joined([ls[0], "\u00e9t\u00e9,1,m".encode(), *ls[2:]], e), "non-ASCII")
    edit(files[23], lambda ls, e: joined(ls, e)[:-len(e)], "no final line break")
    edit(files[25], lambda ls, e: e.join(ls[:3]) + b"\n" + b"\r\n".join(ls[3:]) + b"\r\n", "mixed line ends")
    return done


def _state(con) -> tuple:
    scores = con.execute("SELECT model, benchmark, subdir, instance_id, score, metric_name, source_ref "
                         "FROM scores ORDER BY ALL").fetchall()
    files = con.execute("SELECT * EXCLUDE (ingested_at, tree) FROM score_files ORDER BY path").fetchall()
    return scores, files


@pytest.mark.parametrize("duplicates", ["first", "last"])
def test_on_a_damaged_synthetic_tree_the_bulk_path_stores_and_reports_what_the_per_file_path_does(
        tmp_path, monkeypatch, duplicates):
    from ingest.synthetic import generate_tree

    monkeypatch.setattr(bulk, "BATCH_FILES", 7)                # several batches
    monkeypatch.setattr(bulk, "INSERT_CHUNK", 5)               # each batch handed to DuckDB in many chunks
    root = tmp_path / "t"
    generate_tree(root, n_models=4, seed=3, scale=0.02)
    done = _inject(root)
    assert len(done) == 13
    got = {}
    for how in ("bulk", "per-file"):
        with monkeypatch.context() as m:
            if how == "per-file":
                _per_file_only(m)
            con = connect(tmp_path / f"{how}.duckdb")
            report = ingest_tree(con, root, tmp_path / f"{how}-lake", duplicates=duplicates)
            assert lake_drift(con, tmp_path / f"{how}-lake") == {}
            got[how] = (_state(con), sorted((a.kind, a.where, a.message) for a in report.anomalies),
                        report.rows_written, report.files_per_file)
            con.close()
    (state_b, anomalies_b, rows_b, per_file_b), (state_r, anomalies_r, rows_r, per_file_r) = got["bulk"], got["per-file"]
    assert per_file_r == len(list(root.rglob("*.csv"))) and per_file_b == 4    # quoted, legacy, blank, CR
    assert rows_b == rows_r and state_b == state_r
    assert anomalies_b == anomalies_r
    kinds = {k for k, _, _ in anomalies_b}
    assert {"repeated_runs", "conflicting_duplicates", "null_scores", "out_of_range"} <= kinds


def test_inserted_rows_come_in_chunks_shorter_than_a_duckdb_row_group():
    rows = pa.table({"fi": pa.array(np.arange(10, dtype=np.int32)), "instance_id": [str(i) for i in range(10)],
                     "score": pa.array(np.linspace(0, 1, 10)), "metric_name": ["m"] * 10}, schema=bulk.ROWS_SCHEMA)
    rows = pa.concat_tables([rows.slice(0, 7), rows.slice(7)])          # chunks of 7 and 3 rows
    assert bulk.INSERT_CHUNK < bulk.DUCKDB_ROW_GROUP
    chunked = bulk._in_row_groups(rows, chunk=4)
    assert [len(c) for c in chunked.column("fi").chunks] == [4, 3, 3]
    assert chunked.equals(rows)


BAD_LINES = {
    # line 6 of a CRLF or LF synthetic file, damaged: (new line, expected line of the error)
    "a fourth field": (lambda l: l + b",surplus", 6),
    "a missing field": (lambda l: l.rsplit(b",", 1)[0], 6),
    "an empty id": (lambda l: b"," + l.split(b",", 1)[1], 6),
    "a padded empty id": (lambda l: b"  ," + l.split(b",", 1)[1], 6),
    "whitespace only": (lambda l: b"   ", 6),
    "a quoted line break in the id": (lambda l: b'"a\nb",1,m', 6),
}


@pytest.mark.parametrize("damage", sorted(BAD_LINES))
def test_on_a_synthetic_tree_a_bad_line_is_named_alike_by_both_paths(tmp_path, monkeypatch, damage):
    from ingest.synthetic import generate_tree

    monkeypatch.setattr(bulk, "BATCH_FILES", 7)
    root = tmp_path / "t"
    generate_tree(root, n_models=4, seed=3, scale=0.02)
    _inject(root)                                               # valid damage too, in other files
    bad = sorted(root.rglob("*.csv"))[-2]
    data = bad.read_bytes()
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.split(eol)
    change, line = BAD_LINES[damage]
    lines[line - 1] = change(lines[line - 1])
    bad.write_bytes(eol.join(lines))
    errors = []
    for how in ("bulk", "per-file"):
        with monkeypatch.context() as m:
            if how == "per-file":
                _per_file_only(m)
            con = connect(tmp_path / f"{how}.duckdb")
            with pytest.raises(IngestError) as info:
                ingest_tree(con, root, tmp_path / f"{how}-lake")
            errors.append((info.value.path, info.value.line, info.value.message))
            assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 0
            con.close()
    assert errors[0] == errors[1] and errors[0][0] == str(bad) and errors[0][1] == line


# ------------------------------------------------------------- size and time first, then the hash
def _reads(monkeypatch) -> list[str]:
    """Names of the files whose bytes are read from now on (by the reader or the listing's hash)."""
    read: list[str] = []
    bytes_of, probe_of = bulk.BatchReader._bytes, bulk.probe

    def counted_bytes(self, fi):
        read.append(Path(self.paths[fi]).name)
        return bytes_of(self, fi)

    def counted_probe(path, classify=True):
        read.append(Path(path).name)
        return probe_of(path, classify)

    monkeypatch.setattr(bulk.BatchReader, "_bytes", counted_bytes)
    monkeypatch.setattr("ingest.load.probe", counted_probe)
    return read


def test_an_unchanged_file_is_not_read_a_touched_one_is_hashed_and_kept_a_changed_one_replaced(tmp_path, monkeypatch):
    import os

    root = _model_tree(tmp_path / "t", {"A": 0.1, "B": 0.9, "C": 0.5})
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, root, tmp_path / "lake")
    before = _snapshot(con, tmp_path / "lake")
    read = _reads(monkeypatch)
    again = ingest_tree(con, root, tmp_path / "lake")
    assert read == [] and again.files_unchanged == 6 and _snapshot(con, tmp_path / "lake") == before
    # the same bytes with a new time: read once, a no-op for the rows, the new time recorded
    touched = root / "gaia" / "B.csv"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    again = ingest_tree(con, root, tmp_path / "lake")
    assert read == ["B.csv"] and again.files_unchanged == 6 and again.rows_written == 0
    assert con.execute("SELECT mtime_ns FROM score_files WHERE path = 'gaia/B.csv'").fetchone()[0] == \
        touched.stat().st_mtime_ns
    read.clear()
    assert ingest_tree(con, root, tmp_path / "lake").files_unchanged == 6 and read == []
    # other bytes of the same size: read, and exactly its rows replaced
    write_csv(root / "gaia" / "C.csv", "id,score,metric_name\ng,0.7,acc\n")
    assert (root / "gaia" / "C.csv").stat().st_size == len("id,score,metric_name\ng,0.5,acc\n")
    changed = ingest_tree(con, root, tmp_path / "lake")
    assert read == ["C.csv", "C.csv"] and (changed.files_changed, changed.rows_removed, changed.rows_written) == (1, 1, 1)
    assert con.execute("SELECT score FROM scores WHERE source_ref = 'gaia/C.csv'").fetchall() == [(0.7,)]
    assert lake_drift(con, tmp_path / "lake") == {}


def test_a_warehouse_from_before_sizes_and_times_hashes_once_then_records_them(tmp_path, monkeypatch):
    root = _model_tree(tmp_path / "t", {"A": 0.1, "B": 0.9})
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, root, tmp_path / "lake")
    con.execute("UPDATE score_files SET size = NULL, mtime_ns = NULL")          # as an older pace left them
    read = _reads(monkeypatch)
    first = ingest_tree(con, root, tmp_path / "lake")
    assert sorted(read) == ["A.csv", "A.csv", "B.csv", "B.csv"] and first.files_unchanged == 4
    assert first.rows_written == 0
    read.clear()
    assert ingest_tree(con, root, tmp_path / "lake").files_unchanged == 4 and read == []


def _classify_by_definition(name: str, data: bytes) -> tuple:
    """The routes of the module doc, one byte-level fact at a time (what bulk._classify computes in two passes)."""
    from ingest.csvfile import HEADER_LEGACY, header_layout

    if not data or b"\x00" in data or b'"' in data:
        return "reference", "", 0, 0
    try:
        data.decode("utf-8")
        header = header_layout(name, data)
    except (UnicodeDecodeError, IngestError):
        return "reference", "", 0, 0
    layout = ",".join(header)
    first = data.find(b"\n")
    if header == HEADER_LEGACY or first < 0 or first + 1 == len(data) \
            or data.count(b"\r") != data.count(b"\r\n") or b"\n\n" in data or b"\n\r\n" in data:
        return "reference", layout, 0, 0
    padded = not data.isascii() or any(bytes([c]) in data for c in b" \t\x0b\x0c\x1c\x1d\x1e\x1f")
    return ("careful" if padded else "fast"), layout, data.count(b"\n") - (1 if data.endswith(b"\n") else 0), first + 1


def test_classify_agrees_with_its_definition_on_random_files():
    import random

    rng = random.Random(7)
    alphabet = [b"a", b"1", b"0.5", b",", b",", b"\n", b"\n", b"\r\n", b"\r", b'"', b" ", b"\t", b"\x0c", b"\x00",
                "\u00e9".encode(), b"\xff", b"\xef\xbb\xbf"]
    headers = [b"id,score,metric_name\n", b"id,score,metric_name\r\n", b"id,score\n", b"\xef\xbb\xbfid,score,metric_name\n",
               b"id,score,metric_name", b"x,y,z\n", b""]
    routes = set()
    for _ in range(4000):
        data = rng.choice(headers) + b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        got = bulk._classify("f.csv", data)
        assert got == _classify_by_definition("f.csv", data), data
        routes.add(got[0])
    assert routes == {"fast", "careful", "reference"}
