"""Many score files at once: DuckDB's parallel CSV reader does the parsing, batch by batch.

Each file's bytes are read once in Python (:func:`probe`): its sha256 (idempotence) and a few cheap
byte-level facts decide how it is read:

* ``fast``: the published header, ASCII, one kind of line ending, no whitespace besides CR/LF.
  DuckDB reads it (``read_csv`` over the whole batch, explicit VARCHAR columns, strict mode) and
  turns the score text into a number with the same rule as :func:`ingest.csvfile.parse_scores`
  (Python ``float`` semantics; the one string DuckDB's cast accepts and Python does not, a ``+-``
  sign pair, is refused explicitly).
* ``careful``: valid but with non-ASCII text or whitespace that may need trimming: DuckDB splits
  the CSV, :func:`ingest.csvfile.normalise` (the per-file parser's own code) trims and converts.
* ``reference``: a legacy ``id,score`` file (column swap detection), mixed line endings, or bytes
  that fail a check: the per-file parser :func:`ingest.csvfile.read_rows` reads it, which either
  raises the ``file:line`` error or returns the rows.
* ``parsed``: rows a harness importer already read and resolved (``pace import``): taken as they are.

After DuckDB's reader, every file's row count must equal its line count less the header; a file
that differs (blank lines, a quoted line break), an empty id, or a batch DuckDB's strict reader
refuses is handed to the per-file parser, which names the file and line of the problem, or -- when
the file is valid after all (e.g. mixed line endings, which DuckDB's strict mode refuses) -- gives
its rows, so no file the per-file parser accepts is ever refused.

Repeated ids are found per batch without grouping by (file, id): a bit set of the files that hold
each (leaf, id) (``bitstring_agg``) has fewer bits than rows only where a file repeats an id; only
those files go through :func:`ingest.csvfile.resolve_duplicates`.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.csvfile import (HEADER_LEGACY, Resolved, check_ids, header_layout, normalise, read_rows,
                            resolve_duplicates, sha256_of)
from ingest.errors import IngestError

#: bytes that utf8_trim_whitespace would trim besides CR and LF (in ASCII)
_PADDING = tuple(bytes([c]) for c in b" \t\x0b\x0c\x1c\x1d\x1e\x1f")
#: a batch holds whole files, up to about this many bytes of CSV (bounds memory, keeps both cores busy)
BATCH_BYTES = 64 << 20
BATCH_FILES = 2048
_COLUMNS = "{'id': 'VARCHAR', 'score': 'VARCHAR', 'metric_name': 'VARCHAR'}"
_READ = (f"read_csv($files, columns = {_COLUMNS}, header = true, delim = ',', quote = '\"', escape = '\"', "
         "auto_detect = false, strict_mode = true, force_not_null = ['id', 'score', 'metric_name'])")
# Python float() semantics on ASCII text without padding: DuckDB's cast agrees except that it takes
# '+-1' as -1 (checked against Python over every string of 1-6 characters of "01.e+-_").
_FAST = f"""
    SELECT file_index::INTEGER AS fi, id AS instance_id,
           CASE WHEN isfinite(v) THEN v END AS score, metric_name
    FROM (SELECT file_index, id, metric_name,
                 CASE WHEN contains(score, '+-') THEN NULL ELSE TRY_CAST(score AS DOUBLE) END AS v
          FROM {_READ})"""
_RAW = f"SELECT file_index::INTEGER AS fi, id, score, metric_name FROM {_READ}"
#: DuckDB refusals of one batch before its remaining files are read by the per-file parser
_RETRIES = 4
_FILE_NAMED = re.compile(r"^\s*file = (.*?)\s*$", re.M)

#: an order-free fingerprint of a file's set of ids (the sum of their hashes, modulo 2^64): two files
#: of a leaf with equal counts and fingerprints hold the same ids (see ingest.anomalies)
IDS_HASH = "(sum(hash(instance_id)) % 18446744073709551616)::UBIGINT"

ROWS_SCHEMA = pa.schema([("fi", pa.int32()), ("instance_id", pa.string()), ("score", pa.float64()),
                         ("metric_name", pa.string())])


@dataclass
class Probe:
    """What one read of a file's bytes says about it."""
    sha256: str
    size: int
    mtime_ns: int
    route: str = ""        # fast | careful | reference | parsed ('' = not classified)
    layout: str = ""       # the header as written: 'id,score,metric_name' or 'id,score'
    n_lines: int = 0       # lines, the header included


def probe(path: Path, classify: bool = True) -> Probe:
    """Hash the file and, if ``classify``, decide how it is read (the bytes are not kept)."""
    before = os.stat(path)
    data = path.read_bytes()
    p = Probe(sha256_of(data), len(data), before.st_mtime_ns)
    if classify:
        p.route, p.layout, p.n_lines = _classify(str(path), data)
    return p


def _classify(name: str, data: bytes) -> tuple[str, str, int]:
    if not data or data.isspace() or b"\x00" in data:
        return "reference", "", 0                     # the per-file parser names the problem
    ascii_only = data.isascii()
    if not ascii_only:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "reference", "", 0
    try:
        header = header_layout(name, data)
    except IngestError:
        return "reference", "", 0
    if header == HEADER_LEGACY:
        return "reference", ",".join(header), 0      # the per-file parser detects swapped columns
    n_lf, n_cr = data.count(b"\n"), data.count(b"\r")
    if n_cr and not (n_cr == n_lf and data.count(b"\r\n") == n_cr):
        return "reference", ",".join(header), 0      # mixed line endings, or a CR that ends no line
    n_lines = n_lf + (0 if data.endswith(b"\n") else 1)
    padded = not ascii_only or any(c in data for c in _PADDING)
    return ("careful" if padded else "fast"), ",".join(header), n_lines


@dataclass
class FileRows:
    """One file's rows after repeated ids were resolved, and what resolving found."""
    n_rows: int
    n_null_scores: int
    ids_hash: int | None   # IDS_HASH of the rows kept
    layout: str
    resolved: Resolved | None = None       # set for files that repeat ids


class BatchReader:
    """Reads batches of files (global index ``fi`` into ``names``) into one Arrow table each.

    ``names`` are the files as errors should name them; ``paths`` where they are on disk;
    ``parsers[fi]`` (route ``parsed``) gives the rows of a unit that was read already."""

    def __init__(self, con: duckdb.DuckDBPyConnection, names: list[str], paths: list[Path], probes: list[Probe],
                 leaf_of: list[int], duplicates: str, parsers: list | None = None):
        self.con, self.names, self.paths, self.probes = con, names, paths, probes
        self.parsers = parsers or [None] * len(names)
        self.leaf_of = np.asarray(leaf_of, np.int32)
        self.duplicates = duplicates
        self.layouts: dict[int, str] = {}        # fi -> layout, for files the per-file parser read
        self._parsed: dict[int, pa.Table] = {}   # rows the per-file parser gave while checking a file
        self.per_file: set[int] = set()          # files the per-file parser read (see the module doc)
        self.seconds = 0.0                       # wall seconds spent in read()

    # ------------------------------------------------------------------ reading
    def read(self, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        """Rows of ``batch`` (fi, instance_id, score, metric_name), each file's rows contiguous and in
        file order, repeated ids resolved; and per file its counts. Raises :class:`IngestError`."""
        started = time.perf_counter()
        try:
            return self._read(batch)
        finally:
            self.seconds += time.perf_counter() - started

    def _read(self, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        done = [fi for fi in batch if self.probes[fi].route == "parsed"]
        if done:
            batch = [fi for fi in batch if self.probes[fi].route != "parsed"]
        reference = {fi for fi in batch if self.probes[fi].route == "reference"}
        parts: list[pa.Table] = []
        for route in ("fast", "careful"):
            todo = [fi for fi in batch if self.probes[fi].route == route]
            for _ in range(_RETRIES):
                if not todo:
                    break
                table, refused = self._duckdb(todo, route)
                if not refused:
                    parts.append(table)
                    todo = []
                    break
                reference |= refused             # valid for the per-file parser: it gives the rows
                todo = [fi for fi in todo if fi not in refused]
            reference |= set(todo)               # refused again and again: read file by file
        parts += [self._reference(fi) for fi in sorted(reference)]
        rows = pa.concat_tables(parts) if parts else ROWS_SCHEMA.empty_table()
        self._check_unchanged(batch)
        rows, info = self._resolve(rows, batch)
        if done:
            parsed = [self._parsed_rows(fi, info) for fi in done]
            rows = pa.concat_tables([rows, *parsed])
        return rows, info

    def _parsed_rows(self, fi: int, info: dict[int, FileRows]) -> pa.Table:
        pf = self.parsers[fi]()
        res = Resolved(pf.table, pf.n_duplicates, pf.n_runs, pf.run_means, pf.conflicting_ids)
        self.layouts[fi] = pf.layout
        info[fi] = self._file_rows(fi, pf.table, res)
        return pa.table([pa.array(np.full(pf.table.num_rows, fi, np.int32)), *pf.table.columns], schema=ROWS_SCHEMA)

    def _duckdb(self, todo: list[int], route: str) -> tuple[pa.Table | None, set[int]]:
        files = [str(self.paths[fi]) for fi in todo]
        try:
            rel = self.con.sql(_FAST if route == "fast" else _RAW, params={"files": files})
            table = rel.to_arrow_table()
        except (duckdb.InvalidInputException, duckdb.ConversionException) as exc:   # what the reader refuses
            return None, self._locate_refusal(todo, str(exc))
        position = table.column("fi")
        bad = self._check_counts(todo, position, table, route)
        if bad:
            return None, bad
        table = table.set_column(0, "fi", pc.take(pa.array(todo, pa.int32()), position))
        if route == "careful":
            table = self._normalise(table)
        return table, set()

    def _normalise(self, raw: pa.Table) -> pa.Table:
        ids = raw.column("id")
        empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(ids)), 0)
        broken = pc.match_substring_regex(ids, r"[\r\n]")
        flagged = pc.or_(empty, broken)
        if pc.any(flagged).as_py():
            fi = raw.column("fi").filter(flagged)[0].as_py()
            one = raw.filter(pc.equal(raw.column("fi"), fi))
            check_ids(self.names[fi], one.column("id"))          # raises with the line
        rows = normalise(ids, raw.column("score"), raw.column("metric_name"))
        return pa.table([raw.column("fi"), *rows.columns], schema=ROWS_SCHEMA)

    def _check_counts(self, todo: list[int], position: pa.ChunkedArray, table: pa.Table, route: str) -> set[int]:
        """Files whose rows do not match their lines (or that hold an empty id) go to the per-file
        parser: it raises the file:line error, or (valid after all) they are read by it.
        ``position``: each row's file as its position in ``todo``."""
        counts = np.bincount(position.to_numpy(), minlength=len(todo)) if len(position) else np.zeros(len(todo))
        suspects = [fi for fi, n in zip(todo, counts.tolist()) if n != self.probes[fi].n_lines - 1 or n == 0]
        if route == "fast" and table.num_rows:
            empty = pc.equal(table.column("instance_id"), "")
            if pc.any(empty).as_py():
                suspects += [todo[i] for i in pc.unique(position.filter(empty)).to_pylist()]
        return self._refer(sorted(set(suspects)))

    def _locate_refusal(self, todo: list[int], message: str) -> set[int]:
        """DuckDB refused the batch: the file it names (else every file, in order) goes to the
        per-file parser, which raises the file:line error or reads the file itself."""
        named = set(_FILE_NAMED.findall(message))
        return self._refer([fi for fi in todo if str(self.paths[fi]) in named] or todo)

    def _refer(self, suspects: list[int]) -> set[int]:
        """The per-file parser reads each suspect: it raises for a bad file; a valid one's rows are
        kept for :meth:`read`."""
        for fi in suspects:
            self._parsed[fi] = self._reference(fi)
        return set(suspects)

    def _reference(self, fi: int) -> pa.Table:
        if fi in self._parsed:
            return self._parsed.pop(fi)
        self.per_file.add(fi)
        data = self.paths[fi].read_bytes()
        if sha256_of(data) != self.probes[fi].sha256:
            raise IngestError(self.names[fi], "changed while it was being ingested; run ingest again")
        layout, rows = read_rows(self.names[fi], data)
        self.layouts[fi] = layout
        return pa.table([pa.array(np.full(rows.num_rows, fi, np.int32)), *rows.columns], schema=ROWS_SCHEMA)

    def _check_unchanged(self, batch: list[int]) -> None:
        for fi in batch:
            st = os.stat(self.paths[fi])
            if st.st_size != self.probes[fi].size or st.st_mtime_ns != self.probes[fi].mtime_ns:
                raise IngestError(self.names[fi], "changed while it was being ingested; run ingest again")

    # ------------------------------------------------------------------ repeated ids
    def _resolve(self, rows: pa.Table, batch: list[int]) -> tuple[pa.Table, dict[int, FileRows]]:
        repeating = self._files_repeating_ids(rows, batch)
        info: dict[int, FileRows] = {}
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
        stats = _query(self.con, f"SELECT fi, count(*), count(score), {IDS_HASH} FROM batch_read GROUP BY fi",
                       batch_read=rows) if rows.num_rows else []
        for fi, n, n_scored, ids_hash in stats:
            if fi not in info:
                info[fi] = FileRows(n, n - n_scored, ids_hash, self._layout(fi))
        return rows, info

    def _files_repeating_ids(self, rows: pa.Table, batch: list[int]) -> set[int]:
        if not rows.num_rows:
            return set()
        fi = rows.column("fi").to_numpy()
        # per leaf, each file of the batch gets a small number: its bit in the (leaf, id) bit set
        local_of = np.zeros(max(batch) + 1, np.int32)
        seen: dict[int, int] = {}
        for f in batch:
            leaf = int(self.leaf_of[f])
            local_of[f] = seen.get(leaf, 0)
            seen[leaf] = local_of[f] + 1
        keyed = pa.table({"leaf": pa.array(self.leaf_of[fi]), "local": pa.array(local_of[fi]),
                          "fi": rows.column("fi"), "instance_id": rows.column("instance_id")})
        found = _query(self.con, f"""
            WITH repeated AS (
                SELECT leaf, instance_id FROM keyed_rows GROUP BY ALL
                HAVING count(*) > bit_count(bitstring_agg(local, 0, {max(seen.values()) - 1})))
            SELECT DISTINCT k.fi FROM keyed_rows AS k SEMI JOIN repeated USING (leaf, instance_id)
            GROUP BY k.fi, k.instance_id HAVING count(*) > 1""", keyed_rows=keyed)
        return {f for (f,) in found}

    def _file_rows(self, fi: int, table: pa.Table, res: Resolved) -> FileRows:
        ids_hash = _query(self.con, f"SELECT {IDS_HASH} FROM resolved_rows", resolved_rows=table)[0][0]
        return FileRows(table.num_rows, table.column("score").null_count, ids_hash, self._layout(fi), res)

    def _layout(self, fi: int) -> str:
        return self.layouts.get(fi) or self.probes[fi].layout


def _query(con: duckdb.DuckDBPyConnection, sql: str, **tables: pa.Table) -> list[tuple]:
    """Run ``sql`` with Arrow ``tables`` registered under their keyword names for its duration."""
    for name, table in tables.items():
        con.register(name, table)
    try:
        return con.execute(sql).fetchall()
    finally:
        for name in tables:
            con.unregister(name)


def batches(order: list[int], probes: list[Probe]) -> list[list[int]]:
    """Consecutive files, whole, up to about :data:`BATCH_BYTES` / :data:`BATCH_FILES` per batch."""
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for fi in order:
        if current and (size + probes[fi].size > BATCH_BYTES or len(current) >= BATCH_FILES):
            out.append(current)
            current, size = [], 0
        current.append(fi)
        size += probes[fi].size
    if current:
        out.append(current)
    return out
