"""Summaries of ``scores`` kept at write time, so that nothing users and ``pace status`` / ``pace
doctor --check`` ask often scans every score row:

- ``score_counts``: rows, scored rows and the content fingerprint per (model, leaf, origin, source_ref)
  (per ingested file, or per run and leaf): rows per benchmark and model, the fingerprint the lake must
  hold (:func:`ingest.lake.lake_drift` with ``stored=True``);
- ``leaf_counts``: the distinct instances of every leaf;
- ``instance_stats``: the rows of the rule ``instance_stats_live`` (sql/095), stored.

They are kept in step by the writers that keep the stored collapsed cells in step, at the same moments
and by the same mark (see :mod:`ingest.derived`): recomputed whole, inside the writer's transaction.
A refresh costs one scan of ``scores`` for the counters and one of the source rows for the rule.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import duckdb

from ingest.lake import ROW_HASH
from ingest.tolerance import same_number

STAMP_KEY = "summaries"
RULE = "instance_stats_live"
#: the schema files whose objects these summaries are (a changed one makes every stored row suspect)
_RULE_FILES = ("*_score_counts.sql", "*_leaf_counts.sql", "*_instance_stats.sql", "*_instance_stats_live.sql",
               "*_instance_target_corr.sql", "*_model_ability.sql", "*_target_means.sql", "*_target_instances.sql",
               "[0-9][0-9][0-9]_models.sql")
#: the rule's correlations are sums added in an order that varies with DuckDB's threads
_TOLERANCE = 1e-9
# The rows of `scores` (the view over score_rows and score_sources) grouped by their integer source id first,
# then the few thousand sources by their key (several sources may share one, e.g. a run's batches): the same
# sums as grouping every row by five strings, for ~60% of the time (0.26 -> 0.15 s at 9.2 M rows)
_COUNTS = f"""SELECT s.model, s.benchmark, s.subdir, s.origin, s.source_ref, sum(c.n_rows)::BIGINT AS n_rows,
                     sum(c.n_scored)::BIGINT AS n_scored, sum(c.fingerprint) AS fingerprint
              FROM (SELECT source_id, count(*) AS n_rows, count(score) AS n_scored,
                           sum({ROW_HASH}::HUGEINT) AS fingerprint
                    FROM score_rows JOIN score_sources USING (source_id) GROUP BY source_id) AS c
              JOIN score_sources AS s USING (source_id)
              GROUP BY ALL"""
_LEAVES = "SELECT benchmark, subdir, count(DISTINCT instance_id) AS n_instances FROM scores GROUP BY ALL"
_STATS_KEY = ("benchmark", "subdir", "instance_id")
#: ingest.preference.PRESENT_ROWS from the counters: rows per ingested file in scores (score_counts) or
#: kept out of it by the preference rule (scores_displaced: only contested cells, a small table)
PRESENT_ROWS = """SELECT path, sum(n) AS n FROM (
                      SELECT source_ref AS path, n_rows AS n FROM score_counts WHERE origin = 'ingest'
                      UNION ALL SELECT source_ref, count(*) FROM scores_displaced GROUP BY 1) GROUP BY 1"""


@lru_cache(maxsize=1)
def rule_fingerprint() -> str:
    from warehouse.settings import SQL_DIR

    h = hashlib.sha256((_COUNTS + _LEAVES).encode())
    for pattern in _RULE_FILES:
        for path in sorted(SQL_DIR.glob(pattern)):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def is_stale(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT any_value(value) FROM pace_meta WHERE key = ?", [STAMP_KEY]).fetchall()[0]
    return not (row and row[0] == rule_fingerprint())


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute every summary from ``scores`` and stamp them (inside the caller's transaction)."""
    con.execute("DELETE FROM score_counts")
    con.execute(f"INSERT INTO score_counts BY NAME {_COUNTS}")
    con.execute("DELETE FROM leaf_counts")
    con.execute(f"INSERT INTO leaf_counts BY NAME {_LEAVES}")
    con.execute("DELETE FROM instance_stats")
    con.execute(f"INSERT INTO instance_stats BY NAME SELECT * FROM {RULE}")
    con.execute("INSERT OR REPLACE INTO pace_meta VALUES (?, ?)", [STAMP_KEY, rule_fingerprint()])


def mark_stale(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("DELETE FROM pace_meta WHERE key = ?", [STAMP_KEY])


def drift(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Summary tables whose stored rows differ from ``scores``: table -> rows that differ (missing,
    extra, or another value). Costs what a refresh costs."""
    found = {}
    counts = con.execute(f"""
        SELECT count(*) FROM score_counts AS s FULL OUTER JOIN ({_COUNTS}) AS r
          ON s.model = r.model AND s.benchmark = r.benchmark AND s.subdir = r.subdir AND s.origin = r.origin
         AND s.source_ref = r.source_ref
        WHERE s.model IS NULL OR r.model IS NULL OR s.n_rows <> r.n_rows OR s.n_scored <> r.n_scored
           OR s.fingerprint <> r.fingerprint""").fetchall()[0][0]
    leaves = con.execute(f"""
        SELECT count(*) FROM leaf_counts AS s FULL OUTER JOIN ({_LEAVES}) AS r USING (benchmark, subdir)
        WHERE s.n_instances IS DISTINCT FROM r.n_instances""").fetchall()[0][0]
    key = " AND ".join(f"s.{k} = r.{k}" for k in _STATS_KEY)
    close = " AND ".join(same_number(f"s.{c}", f"r.{c}", _TOLERANCE)
                         for c in ("mean_score", "difficulty", "variance", "discrimination"))
    stats = con.execute(f"""
        SELECT count(*) FROM instance_stats AS s FULL OUTER JOIN {RULE} AS r ON {key}
        WHERE s.benchmark IS NULL OR r.benchmark IS NULL OR s.n_models <> r.n_models OR NOT ({close})
           OR map_keys(s.target_correlation) IS DISTINCT FROM map_keys(r.target_correlation)
           OR NOT coalesce(list_bool_and(list_transform(list_zip(map_values(s.target_correlation),
                                                                 map_values(r.target_correlation)),
                   lambda p: {same_number("p[1]", "p[2]", _TOLERANCE)})), true)
        """).fetchall()[0][0]
    for table, n in (("score_counts", counts), ("leaf_counts", leaves), ("instance_stats", stats)):
        if n:
            found[table] = n
    return found


def totals(con: duckdb.DuckDBPyConnection) -> tuple:
    """(score rows, files, known models, other models, leaves), from the counters. Known and other as the
    view ``models`` says (rows in a source benchmark and not held; the others include models with
    metadata only), which the tests compare."""
    return con.execute("""
        WITH scored AS (
            SELECT c.model, coalesce(bool_or(b.role = 'source'), false) AS has_source
            FROM score_counts AS c LEFT JOIN benchmarks AS b USING (benchmark) GROUP BY c.model),
        every AS (
            SELECT coalesce(s.model, d.model) AS model, coalesce(s.has_source, false) AS has_source
            FROM scored AS s FULL OUTER JOIN (SELECT DISTINCT model FROM model_metadata) AS d USING (model)),
        per_model AS (
            SELECT e.model, e.has_source AND h.model IS NULL AS known
            FROM every AS e LEFT JOIN model_holds AS h USING (model))
        SELECT (SELECT coalesce(sum(n_rows), 0) FROM score_counts), (SELECT count(*) FROM score_files),
               (SELECT count(*) FROM per_model WHERE known), (SELECT count(*) FROM per_model WHERE NOT known),
               (SELECT count(*) FROM leaf_counts)""").fetchall()[0]


def per_benchmark(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """(benchmark, role, leaves, models, rows, instances) per benchmark with rows or a role other than
    excluded, from the counters."""
    return con.execute("""
        WITH counted AS (
            SELECT benchmark, count(DISTINCT model) AS models, sum(n_rows) AS n FROM score_counts GROUP BY 1),
        leaves AS (
            SELECT benchmark, count(*) AS leaves, sum(n_instances) AS instances FROM leaf_counts GROUP BY 1)
        SELECT b.benchmark, b.role, coalesce(l.leaves, 0), coalesce(c.models, 0), coalesce(c.n, 0)::BIGINT,
               coalesce(l.instances, 0)::BIGINT
        FROM benchmarks AS b LEFT JOIN counted AS c USING (benchmark) LEFT JOIN leaves AS l USING (benchmark)
        WHERE coalesce(c.n, 0) > 0 OR b.role <> 'excluded'
        ORDER BY b.role DESC, b.benchmark""").fetchall()
