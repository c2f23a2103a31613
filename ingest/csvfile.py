"""Read one score file strictly: every problem is an :class:`IngestError` naming the file and line.

Accepted forms (header on line 1, LF or CRLF, optional UTF-8 byte-order mark):

* ``id,score,metric_name`` — the published layout;
* ``id,score`` — the legacy 2-column layout (metric_name becomes NULL). If every ``id`` value is a
  number and some ``score`` value is not, the two columns were written swapped and are swapped back
  (what the published loader meant to do; its own branch crashes, spec §18 item 5).

Scores are parsed here: the text, whitespace trimmed, as Python's ``float`` reads it (so ``1_000``
and ``+.5`` are numbers); empty, non-numeric and non-finite values become NULL (counted), never 0.
:mod:`ingest.bulk` reads most files with DuckDB under the same rule (checked by the tests).

Repeated ids: the policy ``first`` (the published choice), ``last`` or ``error`` decides which row
of an id is kept. Two patterns are told apart and reported: a file that holds ``k`` whole runs over
the same ids (``n_runs``, with each run's mean, e.g. a broken run followed by the real one), and ids
repeated with *different* scores (``conflicting_ids``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ingest.errors import IngestError

HEADER_PUBLISHED = ("id", "score", "metric_name")
HEADER_LEGACY = ("id", "score")
_NUMBER = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$"
DUPLICATE_POLICIES = ("first", "last", "error")


@dataclass
class ParsedFile:
    sha256: str
    layout: str            # 'id,score,metric_name' or 'id,score (swapped)' or 'id,score'
    table: pa.Table        # instance_id (string), score (float64, NULL = empty/non-numeric), metric_name
    n_duplicates: int      # repeated occurrences of an id, dropped (which ones: the policy)
    n_null_scores: int
    n_runs: int = 1        # k > 1: the rows are k whole runs over the same ids, one after the other
    run_means: list = None           # mean score of each run (when n_runs > 1)
    conflicting_ids: list = None     # ids repeated with different scores (or score NULL in one)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_of_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _decode_checked(name: str, data: bytes) -> str:
    if not data.strip():
        raise IngestError(name, "empty file (expected a header id,score,metric_name and rows)", line=1)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise IngestError(name, "binary data (NUL byte): not a CSV text file", line=_line_of_offset(data, nul))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(name, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                          line=_line_of_offset(data, exc.start)) from None


def _header(name: str, text: str) -> tuple[str, ...]:
    first = text.split("\n", 1)[0].rstrip("\r").lstrip("\ufeff")
    fields = tuple(f.strip().strip('"') for f in first.split(","))
    if fields in (HEADER_PUBLISHED, HEADER_LEGACY):
        return fields
    raise IngestError(name, f"unexpected header {first!r} (expected 'id,score,metric_name' or legacy 'id,score')",
                      line=1)


def header_layout(name: str, data: bytes) -> tuple[str, ...]:
    """The header fields of a score file's bytes (published or legacy) or :class:`IngestError` (line 1)."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    first = body.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return _header(name, first)


def read_rows(name: str, data: bytes) -> tuple[str, pa.Table]:
    """Parse ``data`` (the bytes of the file called ``name``) into its rows, in file order, before
    repeated ids are resolved: ``(layout, table)`` with the columns of :func:`normalise`.

    Every structural problem is an :class:`IngestError` naming the file and line."""
    text = _decode_checked(name, data)
    header = _header(name, text)
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    ragged: list[tuple[int | None, int, str]] = []

    def on_invalid_row(row):
        ragged.append((row.number, row.actual_columns, row.text))
        return "skip"

    types = {c: pa.string() for c in header}
    try:
        table = pcsv.read_csv(
            pa.BufferReader(body),
            read_options=pcsv.ReadOptions(column_names=list(header), skip_rows=1, use_threads=False),
            parse_options=pcsv.ParseOptions(invalid_row_handler=on_invalid_row, newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        raise IngestError(name, f"unreadable CSV: {exc}") from None
    if ragged:
        number, actual, row_text = ragged[0]
        more = f" (and {len(ragged) - 1} more such rows)" if len(ragged) > 1 else ""
        raise IngestError(name, f"row has {actual} fields, header has {len(header)}: {row_text[:80]!r}{more}",
                          line=number)
    if table.num_rows == 0:
        raise IngestError(name, "header but no rows", line=2)

    ids, scores = table.column("id"), table.column("score")
    check_ids(name, ids)
    layout = ",".join(header)
    if header == HEADER_LEGACY:
        ids_numeric = pc.all(pc.match_substring_regex(ids, _NUMBER)).as_py()
        scores_numeric = pc.all(pc.match_substring_regex(scores, _NUMBER)).as_py()
        if ids_numeric and not scores_numeric:
            ids, scores = scores, ids
            layout = "id,score (swapped)"
        metric = pa.nulls(table.num_rows, pa.string())
    else:
        metric = table.column("metric_name")
    return layout, normalise(ids, scores, metric)


def normalise(ids, scores, metric) -> pa.Table:
    """Raw text columns -> ``instance_id`` (whitespace trimmed), ``score`` (:func:`parse_scores`),
    ``metric_name`` (as written)."""
    return pa.table({"instance_id": pc.utf8_trim_whitespace(ids), "score": parse_scores(scores),
                     "metric_name": metric})


def check_ids(name: str, ids) -> None:
    """Raw instance ids (as read) must be non-empty once trimmed and on one line (row index + 2 is
    the line of a row while no value holds a line break)."""
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(ids)), 0)
    if pc.any(empty).as_py():
        raise IngestError(name, "empty instance id", line=pc.index(empty, True).as_py() + 2)
    broken = pc.match_substring_regex(ids, r"[\r\n]")
    if pc.any(broken).as_py():
        raise IngestError(name, "instance id contains a line break (quoted multi-line value)",
                          line=pc.index(broken, True).as_py() + 2)


@dataclass
class Resolved:
    """A file's rows after its repeated ids were resolved by the ``--duplicates`` policy."""
    table: pa.Table
    n_duplicates: int
    n_runs: int = 1
    run_means: list = None
    conflicting_ids: list = None


def resolve_duplicates(name: str, table: pa.Table, duplicates: str = "first",
                       line_of=lambda row: row + 2) -> Resolved:
    """Keep one row per instance id (``first`` or ``last`` in file order) or raise for ``error``;
    tell whole repeated runs and conflicting repeats apart. ``line_of(row)`` is the line an error
    about row ``row`` (0-based) points at."""
    n_rows = table.num_rows
    if pc.count_distinct(table.column("instance_id")).as_py() == n_rows:
        return Resolved(table, 0, 1, [], [])
    n_runs, run_means = repeated_runs(table)
    conflicts = conflicting_ids(table)
    if duplicates == "error":
        row = _first_repeat(table)
        raise IngestError(name, f"id {table.column('instance_id')[row].as_py()!r} repeats an earlier id"
                          + (f" (the file holds {n_runs} runs over the same ids)" if n_runs > 1 else "")
                          + "; --duplicates first|last chooses which row to keep", line=line_of(row))
    kept = _occurrences(table, last=duplicates == "last")
    return Resolved(kept, n_rows - kept.num_rows, n_runs, run_means, conflicts)


def parse_bytes(name: str, data: bytes, duplicates: str = "first") -> ParsedFile:
    """Parse ``data`` (the bytes of the file called ``name``) or raise :class:`IngestError`.

    ``duplicates``: which row of a repeated id to keep (``first``, ``last``) or ``error``."""
    layout, rows = read_rows(name, data)
    return finish_rows(name, sha256_of(data), layout, rows, duplicates)


def finish_rows(name: str, sha256: str, layout: str, table: pa.Table, duplicates: str = "first",
                line_of=lambda row: row + 2) -> ParsedFile:
    """Apply the repeated-id policy to parsed rows (``instance_id`` string, ``score`` float64 with NULL
    for no usable score, ``metric_name``) and count what was dropped. Every reader of score rows (the
    per-file CSV parser, the harness importers; :mod:`ingest.bulk` through :func:`resolve_duplicates`)
    ends here, so repeated ids are handled and reported alike."""
    res = resolve_duplicates(name, table, duplicates, line_of)
    return ParsedFile(sha256=sha256, layout=layout, table=res.table, n_duplicates=res.n_duplicates,
                      n_null_scores=res.table.column("score").null_count, n_runs=res.n_runs,
                      run_means=res.run_means, conflicting_ids=res.conflicting_ids)


def parse_scores(text: pa.ChunkedArray) -> pa.Array:
    """Text -> float64 as Python's ``float`` reads the trimmed text (Arrow's cast when it takes every
    value: it takes a subset of what ``float`` takes, with the same values); empty, non-numeric and
    non-finite values become NULL (never 0)."""
    trimmed = pc.utf8_trim_whitespace(text)
    try:
        values = pc.cast(trimmed, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pa.chunked_array([pa.array([_to_float(v) for v in trimmed.to_pylist()], pa.float64())])
    finite = pc.is_finite(values)
    if not pc.all(finite).as_py():
        values = pc.if_else(finite, values, pa.scalar(None, pa.float64()))
    return values


def _to_float(value: str | None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _occurrences(table: pa.Table, last: bool = False) -> pa.Table:
    """Keep the first (or last) row of every instance id, in file order."""
    agg = "max" if last else "min"
    rows = table.append_column("_row", pa.array(range(table.num_rows), pa.int64()))
    chosen = rows.group_by("instance_id", use_threads=False).aggregate([("_row", agg)])
    keep = pc.is_in(rows.column("_row"), value_set=chosen.column(f"_row_{agg}"))
    return table.filter(keep)


def _first_repeat(table: pa.Table) -> int:
    """Row index of the first id that already occurred above it."""
    seen = set()
    for i, value in enumerate(table.column("instance_id").to_pylist()):
        if value in seen:
            return i
        seen.add(value)
    return 0


def repeated_runs(table: pa.Table) -> tuple[int, list[float]]:
    """(k, mean of each run) when the rows are k >= 2 consecutive blocks, each holding every id
    exactly once; (1, []) otherwise."""
    ids = table.column("instance_id")
    n, d = table.num_rows, pc.count_distinct(ids).as_py()
    if d == 0 or n % d or n == d:
        return 1, []
    k = n // d
    first = set(ids.slice(0, d).to_pylist())
    for j in range(k):
        block = ids.slice(j * d, d)
        if pc.count_distinct(block).as_py() != d or (j and set(block.to_pylist()) != first):
            return 1, []
    scores = table.column("score")
    return k, [pc.mean(scores.slice(j * d, d)).as_py() for j in range(k)]


def conflicting_ids(table: pa.Table) -> list[str]:
    """Ids whose repeated rows disagree on the score (a NULL counts as a value), in file order."""
    values: dict[str, set] = {}
    order: dict[str, None] = {}       # a dict, not a list: membership in O(1) (10^6 repeated ids)
    for i, s in zip(table.column("instance_id").to_pylist(), table.column("score").to_pylist()):
        seen = values.setdefault(i, set())
        if seen and s not in seen:
            order.setdefault(i)
        seen.add(s)
    return list(order)
