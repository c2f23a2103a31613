"""Writes of ``scores``: the view (sql/004_scores.sql) over ``score_rows`` (source id, instance id,
score, metric) and ``score_sources`` (what a file's or a run's rows share: model, leaf, origin,
source_ref, recorded_at).

Storing the per-file constants once makes the bulk append of ingest ~3x cheaper than nine columns
per row; readers see the same nine columns as before. DuckDB cannot write through a view, so every
writer of score rows comes here:

- :func:`append` stores rows given as a query with the nine columns of ``scores`` (any order, by name),
  keeping its constraints (NOT NULL keys, ``origin`` 'ingest' or 'runner');
- :func:`delete_sources` drops every row of the sources a predicate on their constants picks (ingest
  replacing files: no row is read);
- :func:`execute` runs one statement, carrying out ``INSERT INTO scores``, ``DELETE FROM scores`` and
  ``UPDATE scores`` on the two tables (the runners, the preference rule, `pace alias`, `pace doctor`,
  and ad-hoc SQL with ``--write``), and any other statement as it is.

A source whose rows were all deleted row by row stays in score_sources (harmless: the view joins rows
to sources, and an append with the same constants reuses it); ingest drops the sources of the files it
replaces.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import duckdb

#: the columns of ``scores``, in order
COLUMNS = ("model", "benchmark", "subdir", "instance_id", "score", "metric_name", "origin", "source_ref",
           "recorded_at")
#: the columns a source holds once for all its rows
SOURCE_COLUMNS = ("model", "benchmark", "subdir", "origin", "source_ref", "recorded_at")
#: the rows of ``scores`` with the rowid of their score_rows row (row_id): what deletes and updates pick from
KEYED_ROWS = ("(SELECT r.rowid AS row_id, s.model, s.benchmark, s.subdir, r.instance_id, r.score, r.metric_name, "
              "s.origin, s.source_ref, s.recorded_at FROM score_rows AS r JOIN score_sources AS s USING (source_id))")
# the staging table of appends: the constraints `scores` had as a table, so bad rows fail as they did
_STAGING = "scores_in"
_STAGING_DDL = f"""CREATE OR REPLACE TEMP TABLE {_STAGING} (
    model VARCHAR NOT NULL, benchmark VARCHAR NOT NULL, subdir VARCHAR NOT NULL, instance_id VARCHAR NOT NULL,
    score DOUBLE, metric_name VARCHAR, origin VARCHAR NOT NULL CHECK (origin IN ('ingest', 'runner')),
    source_ref VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL)"""

_TARGET = r"(?:(?:main|memory)\s*\.\s*)?scores\b(?!\s*\.)"
_INSERT = re.compile(rf"^\s*INSERT\s+INTO\s+{_TARGET}(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_DELETE = re.compile(rf"^\s*DELETE\s+FROM\s+{_TARGET}\s*(?:AS\s+)?(?P<alias>(?!USING\b|WHERE\b)\w+)?"
                     r"\s*(?P<rest>.*?)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_UPDATE = re.compile(rf"^\s*UPDATE\s+{_TARGET}\s*(?:AS\s+)?(?P<alias>(?!SET\b)\w+)?\s*SET\s+(?P<rest>.*?)\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)


def next_source_id(con: duckdb.DuckDBPyConnection) -> int:
    """The first unused source id."""
    return con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM score_sources").fetchall()[0][0]


def append(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[Any] | None = None) -> int:
    """Store the rows of ``query`` (the columns of ``scores``, by name). Returns how many."""
    con.execute(_STAGING_DDL)
    try:
        con.execute(f"INSERT INTO {_STAGING} BY NAME {query}", params)
        return _flush(con)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_STAGING}")


def _flush(con: duckdb.DuckDBPyConnection) -> int:
    """Move the staged rows into score_rows, adding the sources they need."""
    keys = ", ".join(SOURCE_COLUMNS)
    on = " AND ".join(f"s.{c} = i.{c}" for c in SOURCE_COLUMNS)
    con.execute(f"""
        INSERT INTO score_sources
        SELECT (SELECT coalesce(max(source_id), 0) FROM score_sources)
               + row_number() OVER (ORDER BY {keys}), *
        FROM (SELECT DISTINCT {keys} FROM {_STAGING} EXCEPT SELECT {keys} FROM score_sources)""")
    # one id per key even if two sources came to share it (a model renamed into another's name)
    return con.execute(f"""
        INSERT INTO score_rows
        SELECT s.source_id, i.instance_id, i.score, i.metric_name
        FROM {_STAGING} AS i
        JOIN (SELECT min(source_id) AS source_id, {keys} FROM score_sources GROUP BY ALL) AS s ON {on}""").fetchall()[0][0]


def delete_sources(con: duckdb.DuckDBPyConnection, where: str, params: Sequence[Any] | None = None) -> None:
    """Drop the sources ``where`` picks (a predicate on :data:`SOURCE_COLUMNS`) and all their rows."""
    picked = f"SELECT source_id FROM score_sources WHERE {where}"
    con.execute(f"DELETE FROM score_rows WHERE source_id IN ({picked})", params)
    con.execute(f"DELETE FROM score_sources WHERE {where}", params)


def _top_level(text: str):
    """(index, character) of every character of ``text`` outside brackets and quotes."""
    depth, quote = 0, None
    for k, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            yield k, ch


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and quotes."""
    cuts = [k for k, ch in _top_level(text) if ch == sep]
    return [text[a + 1:b] for a, b in zip([-1] + cuts, cuts + [len(text)])]


def _clause(text: str, word: str) -> tuple[str, str | None]:
    """``text`` cut at the first top-level keyword ``word``: (before, after) or (text, None)."""
    pattern = re.compile(rf"{word}\b", re.IGNORECASE)
    for k, _ in _top_level(text):
        if pattern.match(text, k) and (k == 0 or not (text[k - 1].isalnum() or text[k - 1] == "_")):
            return text[:k], text[k + len(word):]
    return text, None


def _delete(con, alias: str, using: str | None, where: str | None, params) -> int:
    picked = f"SELECT DISTINCT {alias}.row_id FROM {KEYED_ROWS} AS {alias}"
    if using:
        picked += f", {using}"
    if where:
        picked += f" WHERE {where}"
    return con.execute(f"DELETE FROM score_rows WHERE rowid IN ({picked})", params).fetchall()[0][0]


def _update(con, alias: str, rest: str, params) -> int:
    assignments, tail = _clause(rest, "FROM")
    where = None
    if tail is None:
        assignments, where = _clause(assignments, "WHERE")
    else:
        tail, where = _clause(tail, "WHERE")
    changed = []
    for part in _split_top(assignments):
        column, _, value = part.partition("=")
        column = column.strip().split(".")[-1].strip('"').lower()
        if column not in COLUMNS:
            raise duckdb.BinderException(f"UPDATE scores: no column {column!r} (columns: {', '.join(COLUMNS)})")
        changed.append(f"{value.strip()} AS {column}")
    picked = (f"SELECT DISTINCT ON ({alias}.row_id) {alias}.* REPLACE ({', '.join(changed)}) "
              f"FROM {KEYED_ROWS} AS {alias}")
    if tail:
        picked += f", {tail}"
    if where:
        picked += f" WHERE {where}"
    con.execute(f"CREATE OR REPLACE TEMP TABLE score_store_upd AS {picked}", params)
    try:
        n = con.execute("SELECT count(*) FROM score_store_upd").fetchall()[0][0]
        con.execute("DELETE FROM score_rows WHERE rowid IN (SELECT row_id FROM score_store_upd)")
        append(con, "SELECT * EXCLUDE (row_id) FROM score_store_upd")
        return n
    finally:
        con.execute("DROP TABLE IF EXISTS score_store_upd")


def rewrite_kind(statement: str) -> str | None:
    """'insert', 'delete' or 'update' when ``statement`` writes ``scores``, else None."""
    for kind, pattern in (("insert", _INSERT), ("delete", _DELETE), ("update", _UPDATE)):
        if pattern.match(statement):
            return kind
    return None


def execute(con: duckdb.DuckDBPyConnection, statement: str, params: Sequence[Any] | None = None):
    """Run one statement; a write of ``scores`` is carried out on score_rows / score_sources (the
    returned relation then holds the count of rows written, as DuckDB's own DML returns)."""
    kind = rewrite_kind(statement)
    if kind is None:
        return con.execute(statement, params)
    if kind == "insert":
        rest = _INSERT.match(statement).group("rest").strip().rstrip(";")
        con.execute(_STAGING_DDL)
        try:
            con.execute(f"INSERT INTO {_STAGING} {rest}", params)
            n = _flush(con)
        finally:
            con.execute(f"DROP TABLE IF EXISTS {_STAGING}")
    elif kind == "delete":
        m = _DELETE.match(statement)
        using, where = _clause(m.group("rest"), "WHERE")
        using = re.sub(r"^\s*USING\b", "", using, flags=re.IGNORECASE).strip()
        n = _delete(con, m.group("alias") or "scores", using or None, where, params)
    else:
        m = _UPDATE.match(statement)
        n = _update(con, m.group("alias") or "scores", m.group("rest"), params)
    return con.sql(f"SELECT {int(n)}::BIGINT AS \"Count\"")


def execute_script(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[Any] | None = None):
    """Run every statement of ``query`` (writes of ``scores`` as :func:`execute` does); returns the
    relation of the last one, as ``con.sql`` does, or None when it returns nothing."""
    statements = con.extract_statements(query)
    if not any(rewrite_kind(s.query) for s in statements):
        return con.sql(query, params=params) if params is not None else con.sql(query)
    if params is not None and len(statements) > 1:
        raise duckdb.InvalidInputException("parameters go with one statement only")
    last = None
    for s in statements:
        if rewrite_kind(s.query):
            last = execute(con, s.query, params)
        else:
            last = con.sql(s.query, params=params) if params is not None else con.sql(s.query)
    return last
