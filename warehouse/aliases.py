"""Model aliases: a file named <alias>.csv belongs to <model>."""
from __future__ import annotations

import duckdb


def add_alias(con: duckdb.DuckDBPyConnection, alias: str, model: str) -> int:
    """Record ``alias -> model`` and rename rows already ingested under ``alias`` (in ``scores``, in
    the stored collapsed cells and in the lake partitions that hold them).

    Rows of another source for the same key (an OpenHands Index import under the alias, Pace files
    under the model) are allowed: the preference rule (``ingest.preference``) keeps one source per model
    and benchmark in ``scores``. Returns the number of score rows renamed. Raises ValueError when
    ``model`` already has a row of the same source with the same key (two files would claim one score).
    """
    from ingest import preference
    from ingest.openhands_index import rename_model

    if alias == model:
        raise ValueError("an alias must differ from the model name")
    clash, _ = preference.cross_source_keys(con, alias, model)
    if clash:
        raise ValueError(f"{clash} rows of {alias!r} have the same key as rows of {model!r}; "
                         "remove one of the two files first")
    from ingest.collapsed import refresh as refresh_collapsed
    from ingest.lake import mark_pending, sync_lake

    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("INSERT OR REPLACE INTO model_aliases VALUES (?, ?)", [alias, model])
        moved = con.execute("SELECT count(*) FROM scores WHERE model = ?", [alias]).fetchone()[0]
        benchmarks = [b for (b,) in con.execute("SELECT DISTINCT benchmark FROM scores WHERE model = ?",
                                                [alias]).fetchall()]
        con.execute("UPDATE scores SET model = ? WHERE model = ?", [model, alias])
        con.execute("UPDATE scores_displaced SET model = ? WHERE model = ?", [model, alias])
        con.execute("UPDATE score_files SET model = ? WHERE model = ?", [model, alias])
        rename_model(con, alias, model)
        benchmarks = sorted(set(benchmarks) | preference.refresh(con))   # two sources may now share a cell
        mark_pending(con, benchmarks)
        refresh_collapsed(con)                      # the renamed rows' cells (and the others' medians)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    sync_lake(con, benchmarks)
    return moved
