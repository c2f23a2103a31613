"""Two sources of rows for one (model, benchmark, subdir): which one ``scores`` holds.

The warehouse's own files (results trees, ``pace import lm-eval|inspect``, runs: source ``pace``) and an
agentic results index (``pace import openhands-index``: source ``openhands-index``, ``score_files.source``)
can both give a model's rows for one target, e.g. the 13 Pace models the OpenHands Index also covers.
Every view and method reads ``scores``, which must hold one row per key, so for each such *cell* the rule
keeps one source's rows in ``scores`` and moves the other's to ``scores_displaced``:

- the source chosen is the model's row of ``agentic_preference``, else its row ``'*'``, else ``pace`` (the
  Pace files stay the truth for the models they cover), when that source has rows in the cell; otherwise
  the source that has them;
- a whole cell goes one way: never some instances from each source, so a model's target mean is the mean
  of one run, and adding a source never changes the rows of a model it does not cover.

Like the stored collapsed cells, the rule is recomputed by every write that can change its answer, inside
the writer's transaction: ingest and ``pace import`` (:func:`ingest.load.load_units`), ``pace alias add``
(which can make two spellings one model), ``pace doctor``. Only cells with displaced rows or rows of an
index file are looked at, so a warehouse without an index import pays nothing.
"""
from __future__ import annotations

import duckdb

from ingest import score_store

PACE = "pace"
INDEX = "openhands-index"
SOURCES = (PACE, INDEX)
#: ``agentic_preference.model`` of the row that applies to every model without one of its own
EVERY_MODEL = "*"

#: rows per ingested file that the warehouse holds: in scores, or kept out of it by the rule (scores_displaced);
#: a file whose count falls short of score_files.n_rows lost rows outside ingest
#: (counted per source id first: one pass over score_rows' narrow id column)
PRESENT_ROWS = """SELECT path, sum(n) AS n FROM (
                      SELECT s.source_ref AS path, c.n
                      FROM (SELECT source_id, count(*) AS n FROM score_rows GROUP BY 1) AS c
                      JOIN score_sources AS s USING (source_id) WHERE s.origin = 'ingest'
                      UNION ALL SELECT source_ref, count(*) FROM scores_displaced GROUP BY 1) GROUP BY 1"""
#: the rows of both tables (``scores`` and ``scores_displaced`` have the same columns)
BOTH_TABLES = "(SELECT * FROM scores UNION ALL BY NAME SELECT * FROM scores_displaced)"

# The source of a row of `scores` or `scores_displaced` (alias r): the file's score_files.source, 'pace'
# for the warehouse's own files and for runs. index_paths: the paths of the index's files.
_SOURCE = f"CASE WHEN r.origin = 'ingest' AND r.source_ref IN (SELECT path FROM index_paths) THEN '{INDEX}' " \
          f"ELSE '{PACE}' END"


def _cells(con: duckdb.DuckDBPyConnection) -> bool:
    """Work out the contested cells and the source each keeps (temp table ``preference_cells``); False
    when there is nothing to decide (no index rows, nothing displaced)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE index_paths AS SELECT path FROM score_files WHERE source = '{INDEX}'")
    if not con.execute("""SELECT (SELECT count(*) FROM index_paths) + (SELECT count(*) FROM scores_displaced)
                       """).fetchone()[0]:
        con.execute("CREATE OR REPLACE TEMP TABLE preference_cells (model VARCHAR, benchmark VARCHAR, "
                    "subdir VARCHAR, chosen VARCHAR)")
        return False
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE preference_cells AS
        WITH touched AS (
            SELECT DISTINCT model, benchmark, subdir FROM scores
            WHERE origin = 'ingest' AND source_ref IN (SELECT path FROM index_paths)
            UNION
            SELECT DISTINCT model, benchmark, subdir FROM scores_displaced
        ),
        candidates AS (
            SELECT r.model, r.benchmark, r.subdir, {_SOURCE} AS source
            FROM scores AS r SEMI JOIN touched AS t USING (model, benchmark, subdir)
            UNION ALL
            SELECT r.model, r.benchmark, r.subdir, {_SOURCE} AS source FROM scores_displaced AS r
        ),
        present AS (
            SELECT model, benchmark, subdir, list_sort(list(DISTINCT source)) AS sources
            FROM candidates GROUP BY ALL
        )
        SELECT p.model, p.benchmark, p.subdir,
               CASE WHEN list_contains(p.sources, coalesce(own.prefer, every.prefer, '{PACE}'))
                    THEN coalesce(own.prefer, every.prefer, '{PACE}') ELSE p.sources[1] END AS chosen
        FROM present AS p
        LEFT JOIN agentic_preference AS own ON own.model = p.model
        LEFT JOIN agentic_preference AS every ON every.model = '{EVERY_MODEL}'""")
    return True


def refresh(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Apply the rule: rows of a source not chosen for their cell leave ``scores`` for ``scores_displaced``,
    rows of the chosen source come back. Runs inside the caller's transaction. Returns the benchmarks whose
    ``scores`` rows changed (their lake partitions and collapsed cells must follow)."""
    if not _cells(con):
        return set()
    wrong = f"""(SELECT r.*, {_SOURCE} AS source, c.chosen FROM {{table}} AS r
                 JOIN preference_cells AS c USING (model, benchmark, subdir)) AS m"""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE preference_out AS
        SELECT m.* EXCLUDE (source, chosen) FROM {wrong.format(table='scores')}
        WHERE m.source <> m.chosen""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE preference_in AS
        SELECT m.* EXCLUDE (source, chosen) FROM {wrong.format(table='scores_displaced')}
        WHERE m.source = m.chosen""")
    key = ("t.model = x.model AND t.benchmark = x.benchmark AND t.subdir = x.subdir "
           "AND t.instance_id = x.instance_id AND t.source_ref = x.source_ref")
    benchmarks = {b for (b,) in con.execute("SELECT benchmark FROM preference_out UNION "
                                            "SELECT benchmark FROM preference_in").fetchall()}
    if not benchmarks:
        return set()
    score_store.execute(con, f"DELETE FROM scores AS t USING preference_out AS x WHERE {key}")
    con.execute("INSERT INTO scores_displaced BY NAME SELECT * FROM preference_out")
    con.execute(f"DELETE FROM scores_displaced AS t USING preference_in AS x WHERE {key}")
    score_store.append(con, "SELECT * FROM preference_in")
    return benchmarks


def drift(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Benchmarks whose rows sit in the wrong table for the rule (rows written outside pace, or a
    preference changed by hand): name -> rows to move. Read-only."""
    if not _cells(con):
        return {}
    rows = con.execute(f"""
        SELECT m.benchmark, count(*) FROM (
            SELECT r.benchmark, {_SOURCE} AS source, c.chosen, true AS in_scores
            FROM scores AS r JOIN preference_cells AS c USING (model, benchmark, subdir)
            UNION ALL
            SELECT r.benchmark, {_SOURCE} AS source, c.chosen, false AS in_scores
            FROM scores_displaced AS r JOIN preference_cells AS c USING (model, benchmark, subdir)) AS m
        WHERE (m.source = m.chosen) <> m.in_scores
        GROUP BY 1 ORDER BY 1""").fetchall()
    return dict(rows)


def set_preference(con: duckdb.DuckDBPyConnection, choices: dict[str, str]) -> None:
    """Record ``model -> source`` choices (``'*'`` for every model); call :func:`refresh` after."""
    for model, source in choices.items():
        if source not in SOURCES:
            raise ValueError(f"source {source!r} is not one of {', '.join(SOURCES)}")
        con.execute("INSERT OR REPLACE INTO agentic_preference VALUES (?, ?, current_localtimestamp())",
                    [model, source])


def preference_of(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The recorded choices, ``'*'`` included (absent: ``pace``)."""
    return dict(con.execute("SELECT model, prefer FROM agentic_preference ORDER BY model").fetchall())


def cross_source_keys(con: duckdb.DuckDBPyConnection, alias: str, model: str) -> tuple[int, int]:
    """Rows of ``alias`` whose key ``model`` already has: (from the same source, from another source).
    Renaming is refused for the first kind only; the rule settles the second."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE index_paths AS SELECT path FROM score_files WHERE source = '{INDEX}'")
    row = con.execute(f"""
        WITH both_tables AS {BOTH_TABLES},
             a AS (SELECT r.benchmark, r.subdir, r.instance_id, {_SOURCE} AS source FROM both_tables AS r
                   WHERE r.model = ?),
             m AS (SELECT r.benchmark, r.subdir, r.instance_id, {_SOURCE} AS source FROM both_tables AS r
                   WHERE r.model = ?)
        SELECT count(*) FILTER (WHERE a.source = m.source), count(*) FILTER (WHERE a.source <> m.source)
        FROM a JOIN m USING (benchmark, subdir, instance_id)""", [alias, model]).fetchone()
    return int(row[0]), int(row[1])
