"""Many score files at once: one multi-threaded Arrow CSV parse per batch of files.

A batch's files are read once, on a few threads (:meth:`BatchReader.read`): the bytes are checked
against the size and modification time seen when the tree was listed, hashed (sha256, the digest
``score_files`` records: OpenSSL's SHA-NI code is faster than BLAKE2 on the machines this runs on)
and classified by a few byte-level facts (:func:`_classify`):

* ``fast``: the published header, ASCII, no quote, no padding whitespace, every CR followed by LF, no
  blank line. The bodies (header stripped) of the batch's fast files are joined into one buffer and
  parsed by one multi-threaded ``pyarrow.csv`` call with quoting off; each row's file follows from the
  files' newline counts (one line is one row, as nothing can hide a line break). Scores become numbers
  by the rule of :func:`ingest.csvfile.parse_scores` (Python ``float`` semantics): Arrow's cast when it
  takes every value (it takes a subset of what ``float`` takes, with the same values), else DuckDB's
  ``TRY_CAST``, which agrees with ``float`` on such text except for a ``+-`` sign pair (refused
  explicitly; both checked by the tests).
* ``careful``: the same, but with non-ASCII text, a byte-order mark or whitespace that may need
  trimming: joined and parsed alike, then :func:`ingest.csvfile.normalise` (the per-file parser's own
  code) trims and converts.
* ``reference``: a legacy ``id,score`` file (column swap detection), quotes, CR-only or blank lines, an
  empty body, or bytes that fail a check: the per-file parser :func:`ingest.csvfile.read_rows` reads
  it, which either raises the ``file:line`` error or returns the rows.
* ``parsed``: rows a harness importer already read and resolved (``pace import``): taken as they are.

A joined buffer that Arrow refuses (a ragged line), whose row count differs from the newline counts,
or that holds an empty id is handed file by file to the per-file parser, in storage order, which
names the first bad file and line (or, the file being valid after all, gives its rows): so every
error is the per-file parser's, and no file it accepts is refused.

Repeated ids are found per batch without grouping by (file, id): the batch's ids are
dictionary-encoded once, and a file whose id indices only grow holds each id once (see
:meth:`BatchReader._resolve`); only the files that repeat one go through
:func:`ingest.csvfile.resolve_duplicates`.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ingest.csvfile import (HEADER_LEGACY, HEADER_PUBLISHED, Resolved, header_layout, normalise, read_rows,
                            resolve_duplicates, sha256_of)
from ingest.errors import IngestError
from warehouse.registered import registered

#: bytes that utf8_trim_whitespace would trim besides CR and LF (in ASCII)
_PADDING = tuple(bytes([c]) for c in b" \t\x0b\x0c\x1c\x1d\x1e\x1f")
_BOM = b"\xef\xbb\xbf"
#: the bytes of a fast file's lines: printable ASCII but the quote and the space, and LF
_PLAIN = bytes(range(0x21, 0x7F)).replace(b'"', b"") + b"\n"
#: a batch holds whole files, up to about this many bytes of CSV (bounds memory: two batches are in
#: flight, as bytes, Arrow strings and rows for the lake). Under glibc's largest mmap threshold (32 MiB), the
#: joined buffer of each batch reuses heap memory instead of faulting in fresh pages: the reader alone, 100
#: synthetic models, 3.3 CPU-s at 96 MiB -> 2.6 at 24 MiB (page faults 130k -> 60k); the DuckDB insert costs the
#: same CPU in 12 statements as in 3
BATCH_BYTES = 24 << 20
BATCH_FILES = 4096
#: the first batch is smaller still: nothing is inserted until it is parsed
FIRST_BATCH_BYTES = 8 << 20
#: threads that read and hash a batch's files (the reads wait on the disk, hashing releases the GIL)
READ_THREADS = 4
_COLUMNS = list(HEADER_PUBLISHED)
_CSV_READ = pcsv.ReadOptions(column_names=_COLUMNS, use_threads=False, block_size=4 << 20)
_CSV_PARSE = pcsv.ParseOptions(quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False,
                               ignore_empty_lines=False)
_CSV_CONVERT = pcsv.ConvertOptions(column_types={c: pa.string() for c in _COLUMNS}, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False)
# Python float() semantics on ASCII text without padding: DuckDB's cast agrees except that it takes
# '+-1' as -1 (checked against Python over every string of 1-6 characters of "01.e+-_").
_SCORE_SQL = """SELECT CASE WHEN isfinite(v) THEN v END AS score
                FROM (SELECT CASE WHEN contains(score, '+-') THEN NULL ELSE TRY_CAST(score AS DOUBLE) END AS v
                      FROM score_text)"""

#: an order-free fingerprint of a file's set of ids (the sum of their hashes, modulo 2^64): two files
#: of a leaf with equal counts and fingerprints hold the same ids (see ingest.anomalies)
IDS_HASH = "(sum(hash(instance_id)) % 18446744073709551616)::UBIGINT"

#: DuckDB's row group size. An Arrow chunk of more rows than this (a CSV block holds ~140k) leaves a partial
#: row group per chunk that the next checkpoint rewrites (1.4 s at 9.2 M rows, against 0.02 s when every
#: chunk is shorter than a row group: DuckDB's batch insert then fills whole row groups from them)
DUCKDB_ROW_GROUP = 122_880
INSERT_CHUNK = DUCKDB_ROW_GROUP // 2

ROWS_SCHEMA = pa.schema([("fi", pa.int32()), ("instance_id", pa.string()), ("score", pa.float64()),
                         ("metric_name", pa.string())])


@dataclass
class Probe:
    """What is known of a file before its rows are read: its size and modification time when the
    tree was listed, its sha256 once its bytes were read, and (after :func:`_classify`) how it is read."""
    sha256: str | None
    size: int
    mtime_ns: int
    route: str = ""        # fast | careful | reference | parsed ('' = not classified)
    layout: str = ""       # the header as written: 'id,score,metric_name' or 'id,score'
    n_rows: int = 0        # fast / careful: lines of the body (one row each)
    body: int = 0          # fast / careful: offset of the body (after the header line)


def stat_probe(path: Path) -> Probe:
    """Size and modification time only (nothing read)."""
    st = os.stat(path)
    return Probe(None, st.st_size, st.st_mtime_ns)


def probe(path: Path, classify: bool = True) -> Probe:
    """Read the file once: hash it and, if ``classify``, decide how it is read (the bytes are not kept)."""
    before = os.stat(path)
    data = path.read_bytes()
    p = Probe(sha256_of(data), len(data), before.st_mtime_ns)
    if classify:
        p.route, p.layout, p.n_rows, p.body = _classify(str(path), data)
    return p


def _classify(name: str, data: bytes) -> tuple[str, str, int, int]:
    """(route, layout, body rows, body offset) of a file's bytes (see the module doc).

    Two passes over the bytes, whatever the file: one ``translate`` keeps the bytes that are not plain
    (quotes, NUL, CR, padding, non-ASCII: usually none, or the CRs), and the newline positions (numpy,
    which releases the GIL for the reading threads) give the row count and the blank lines."""
    if not data:
        return "reference", "", 0, 0
    rest = data.translate(None, _PLAIN)
    if b"\x00" in rest or b'"' in rest:
        return "reference", "", 0, 0                   # the per-file parser names the problem, or reads it
    ascii_only = rest.isascii()
    if not ascii_only:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "reference", "", 0, 0
    try:
        header = header_layout(name, data)
    except IngestError:
        return "reference", "", 0, 0
    layout = ",".join(header)
    if header == HEADER_LEGACY:
        return "reference", layout, 0, 0               # the per-file parser detects swapped columns
    first = data.find(b"\n")
    if first < 0 or first + 1 == len(data):
        return "reference", layout, 0, 0               # header only: the per-file parser says so
    raw = np.frombuffer(data, np.uint8)
    if b"\r" in rest:
        after = np.flatnonzero(raw == 13) + 1
        if after[-1] == len(raw) or not (raw[after] == 10).all():
            return "reference", layout, 0, 0           # a CR that ends no line (CR-only endings)
    lf = np.flatnonzero(raw == 10)
    gaps = np.diff(lf)
    if (gaps == 1).any() or ((gaps == 2) & (raw[lf[:-1] + 1] == 13)).any():
        return "reference", layout, 0, 0               # blank lines: skipped rows shift the line count
    n_rows = len(lf) - 1 + (0 if data.endswith(b"\n") else 1)
    padded = not ascii_only or data.startswith(_BOM) or any(c in rest for c in _PADDING)
    return ("careful" if padded else "fast"), layout, n_rows, first + 1


@dataclass
class FileRows:
    """One file's rows after repeated ids were resolved, and what resolving found."""
    n_rows: int
    n_null_scores: int
    ids_hash: int | None   # IDS_HASH of the rows kept
    layout: str
    resolved: Resolved | None = None       # set for files that repeat ids


class _Refused(Exception):
    """A joined buffer that cannot be read as a whole: its files go to the per-file parser."""


class BatchReader:
    """Reads batches of files (global index ``fi`` into ``names``) into one Arrow table each.

    ``names`` are the files as errors should name them; ``paths`` where they are on disk; ``probes``
    their size and time when listed (and sha256 when known: the bytes must still have it);
    ``parsers[fi]`` (route ``parsed``) gives the rows of a unit that was read already."""

    def __init__(self, con: duckdb.DuckDBPyConnection, names: list[str], paths: list[Path], probes: list[Probe],
                 duplicates: str, parsers: list | None = None):
        self.con, self.names, self.paths, self.probes = con, names, paths, probes
        self.parsers = parsers or [None] * len(names)
        self.duplicates = duplicates
        self.layouts: dict[int, str] = {}        # fi -> layout, for files the per-file parser read
        self.per_file: set[int] = set()          # files the per-file parser read (see the module doc)
        self.seconds = 0.0                       # wall seconds spent in read()
        self._pool = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="bytes")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    # ------------------------------------------------------------------ reading
    def read(self, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        """Rows of ``batch`` (fi, instance_id, score, metric_name), each file's rows contiguous, repeated
        ids resolved; and per file its counts. Raises :class:`IngestError`."""
        started = time.perf_counter()
        try:
            return self._read(batch)
        finally:
            self.seconds += time.perf_counter() - started

    def _read(self, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        done = [fi for fi in batch if self.probes[fi].route == "parsed"]
        files = [fi for fi in batch if self.probes[fi].route != "parsed"]
        data = dict(zip(files, self._pool.map(self._bytes, files)))
        parts: list[pa.Table] = []
        reference = {fi for fi in files if self.probes[fi].route == "reference"}
        for route in ("fast", "careful"):
            group = [fi for fi in files if self.probes[fi].route == route]
            if group:
                try:
                    parts.append(self._joined(group, data, route))
                except _Refused:
                    reference.update(group)      # the per-file parser names the problem (or reads them)
        for fi in sorted(reference):             # in storage order: the first bad file raises
            parts.append(self._reference(fi, data[fi]))
        data.clear()
        rows = pa.concat_tables(parts) if parts else ROWS_SCHEMA.empty_table()
        rows, info = self._resolve(rows, files)
        if done:
            rows = pa.concat_tables([rows, *(self._parsed_rows(fi, info) for fi in done)])
        return _in_row_groups(rows), info

    def _bytes(self, fi: int) -> bytes:
        """The file's bytes, as listed (size, time, and sha256 when known); hashed and classified."""
        p = self.probes[fi]
        with open(self.paths[fi], "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
        if st.st_size != p.size or st.st_mtime_ns != p.mtime_ns or len(data) != p.size:
            raise IngestError(self.names[fi], "changed while it was being ingested; run ingest again")
        digest = sha256_of(data)
        if p.sha256 is not None and digest != p.sha256:
            raise IngestError(self.names[fi], "changed while it was being ingested; run ingest again")
        p.sha256 = digest
        p.route, p.layout, p.n_rows, p.body = _classify(self.names[fi], data)
        return data

    def _joined(self, group: list[int], data: dict[int, bytes], route: str) -> pa.Table:
        """The bodies of ``group`` joined and parsed as one CSV; each row's file from the line counts."""
        pieces = []
        for fi in group:
            body = memoryview(data[fi])[self.probes[fi].body:]
            pieces.append(body)
            if body[-1:] != b"\n":
                pieces.append(b"\n")
        counts = np.fromiter((self.probes[fi].n_rows for fi in group), np.int64, len(group))
        try:
            raw = pcsv.read_csv(pa.py_buffer(b"".join(pieces)), read_options=_CSV_READ, parse_options=_CSV_PARSE,
                                convert_options=_CSV_CONVERT)
        except pa.ArrowInvalid:
            raise _Refused from None             # a ragged line
        if raw.num_rows != counts.sum():
            raise _Refused
        fi = pa.array(np.repeat(np.asarray(group, np.int32), counts))
        ids, scores, metric = raw.column("id"), raw.column("score"), raw.column("metric_name")
        if route == "careful":
            rows = normalise(ids, scores, metric)
            empty = pc.equal(pc.utf8_length(rows.column("instance_id")), 0)
        else:
            rows = pa.table({"instance_id": ids, "score": self._fast_scores(scores), "metric_name": metric})
            empty = pc.equal(ids, "")
        if pc.any(empty).as_py():
            raise _Refused                       # the per-file parser names the line
        return pa.table([fi, *rows.columns], schema=ROWS_SCHEMA)

    def _fast_scores(self, text: pa.ChunkedArray) -> pa.ChunkedArray:
        """Score text (ASCII, no padding) -> float64 by Python ``float``'s rule, non-finite -> NULL."""
        try:
            values = pc.cast(text, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            with registered(self.con, score_text=pa.table({"score": text})):
                return self.con.sql(_SCORE_SQL).to_arrow_table().column("score")
        finite = pc.is_finite(values)
        if not pc.all(finite).as_py():
            values = pc.if_else(finite, values, pa.scalar(None, pa.float64()))
        return values

    def _reference(self, fi: int, data: bytes) -> pa.Table:
        self.per_file.add(fi)
        layout, rows = read_rows(self.names[fi], data)
        self.layouts[fi] = layout
        return pa.table([pa.array(np.full(rows.num_rows, fi, np.int32)), *rows.columns], schema=ROWS_SCHEMA)

    def _parsed_rows(self, fi: int, info: dict[int, FileRows]) -> pa.Table:
        pf = self.parsers[fi]()
        res = Resolved(pf.table, pf.n_duplicates, pf.n_runs, pf.run_means, pf.conflicting_ids)
        self.layouts[fi] = pf.layout
        info[fi] = self._file_rows(fi, pf.table, res)
        return pa.table([pa.array(np.full(pf.table.num_rows, fi, np.int32)), *pf.table.columns], schema=ROWS_SCHEMA)

    # ------------------------------------------------------------------ repeated ids
    def _resolve(self, rows: pa.Table, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        """Count every file's rows, and resolve the repeated ids of the files that have any.

        The batch's ids are dictionary-encoded once (Arrow's hash kernel): a file whose id indices only
        grow holds no id twice (the usual case: files list their ids in the order the first file of the
        leaf did); the others are checked exactly. A file's ``ids_hash`` sums DuckDB's hash of each
        distinct id of the batch, gathered per row."""
        info: dict[int, FileRows] = {}
        fi = rows.column("fi").to_numpy()
        if not len(fi):
            return rows, info
        encoded = pc.dictionary_encode(rows.column("instance_id"))     # one dictionary for every chunk
        idx = np.concatenate([c.indices.to_numpy() for c in encoded.chunks])
        with registered(self.con, batch_ids=pa.table({"id": encoded.chunk(0).dictionary})):
            hashes = self.con.sql("SELECT hash(id) AS h FROM batch_ids").to_arrow_table().column("h").to_numpy()
        starts = np.flatnonzero(np.r_[True, fi[1:] != fi[:-1]])        # each file's rows are contiguous
        ends = np.r_[starts[1:], len(fi)]
        ids_hash = np.add.reduceat(hashes[idx], starts)                 # uint64: the sum modulo 2^64
        scored = np.add.reduceat(pc.is_valid(rows.column("score")).to_numpy(zero_copy_only=False).astype(np.int64),
                                 starts)
        grows = np.r_[True, (idx[1:] > idx[:-1]) | (fi[1:] != fi[:-1])]
        unordered = np.flatnonzero(np.logical_and.reduceat(grows, starts) == 0)
        repeating = {int(fi[starts[k]]) for k in unordered
                     if len(np.unique(idx[starts[k]:ends[k]])) < ends[k] - starts[k]}
        for k, f in enumerate(fi[starts].tolist()):
            if f not in repeating:
                n = int(ends[k] - starts[k])
                info[f] = FileRows(n, n - int(scored[k]), int(ids_hash[k]), self._layout(f))
        if repeating:
            keep = []
            for part_fi in batch:
                if part_fi not in repeating:
                    continue
                mine = rows.filter(pc.equal(rows.column("fi"), part_fi))
                res = resolve_duplicates(self.names[part_fi], mine.drop_columns(["fi"]), self.duplicates)
                info[part_fi] = self._file_rows(part_fi, res.table, res)
                keep.append(pa.table([pa.array(np.full(res.table.num_rows, part_fi, np.int32)),
                                      *res.table.columns], schema=ROWS_SCHEMA))
            others = rows.filter(pc.invert(pc.is_in(rows.column("fi"), pa.array(sorted(repeating), pa.int32()))))
            rows = pa.concat_tables([others, *keep])
        return rows, info

    def _file_rows(self, fi: int, table: pa.Table, res: Resolved) -> FileRows:
        ids_hash = _query(self.con, f"SELECT {IDS_HASH} FROM resolved_rows", resolved_rows=table)[0][0]
        return FileRows(table.num_rows, table.column("score").null_count, ids_hash, self._layout(fi), res)

    def _layout(self, fi: int) -> str:
        return self.layouts.get(fi) or self.probes[fi].layout


def _in_row_groups(rows: pa.Table, chunk: int | None = None) -> pa.Table:
    """``rows`` in chunks of at most ``chunk`` (:data:`INSERT_CHUNK`) rows, slices of its own (no copy): see
    :data:`DUCKDB_ROW_GROUP`."""
    return pa.Table.from_batches(rows.to_batches(max_chunksize=chunk or INSERT_CHUNK), rows.schema)


def _query(con: duckdb.DuckDBPyConnection, sql: str, **tables: pa.Table) -> list[tuple]:
    """Run ``sql`` with Arrow ``tables`` registered under their keyword names."""
    with registered(con, **tables):
        return con.execute(sql).fetchall()


def batches(order: list[int], probes: list[Probe]) -> list[list[int]]:
    """Consecutive files, whole, up to about :data:`BATCH_BYTES` / :data:`BATCH_FILES` per batch (the first
    :data:`FIRST_BATCH_BYTES`)."""
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for fi in order:
        limit = BATCH_BYTES if out else FIRST_BATCH_BYTES
        if current and (size + probes[fi].size > limit or len(current) >= BATCH_FILES):
            out.append(current)
            current, size = [], 0
        current.append(fi)
        size += probes[fi].size
    if current:
        out.append(current)
    return out
