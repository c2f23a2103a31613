"""Model aliases: a file named <alias>.csv belongs to <model>."""
from __future__ import annotations

import duckdb


def add_alias(con: duckdb.DuckDBPyConnection, alias: str, model: str) -> int:
    """Record ``alias -> model`` and rename rows already ingested under ``alias`` (in ``scores``, in
    the stored collapsed cells and in the lake partitions that hold them).

    Returns the number of score rows renamed. Raises ValueError when ``model`` already has a row
    with the same key (two sources would then claim one score).
    """
    if alias == model:
        raise ValueError("an alias must differ from the model name")
    clash = con.execute("""
        SELECT count(*) FROM scores a JOIN scores m
          ON a.benchmark = m.benchmark AND a.subdir = m.subdir AND a.instance_id = m.instance_id
        WHERE a.model = ? AND m.model = ?""", [alias, model]).fetchone()[0]
    if clash:
        raise ValueError(f"{clash} rows of {alias!r} have the same key as rows of {model!r}; "
                         "remove one of the two files first")
    from ingest.derived import refresh as refresh_derived
    from ingest.lake import mark_pending, sync_lake

    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("INSERT OR REPLACE INTO model_aliases VALUES (?, ?)", [alias, model])
        moved = con.execute("SELECT count(*) FROM scores WHERE model = ?", [alias]).fetchone()[0]
        benchmarks = [b for (b,) in con.execute("SELECT DISTINCT benchmark FROM scores WHERE model = ?",
                                                [alias]).fetchall()]
        mark_pending(con, benchmarks)
        con.execute("UPDATE scores SET model = ? WHERE model = ?", [model, alias])
        con.execute("UPDATE score_files SET model = ? WHERE model = ?", [model, alias])
        refresh_derived(con)                        # the renamed rows' cells (and the others' medians), counts
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    sync_lake(con, benchmarks)
    return moved
