"""`pace doctor`: find what has drifted and repair what can be derived again.

Checked: the schema (applied on the write open that runs the doctor), lake partitions marked
pending by a writer that was killed, every benchmark's lake partition against ``scores`` (row
count and a content fingerprint), leftover staging / trash folders, the stored collapsed cells
against their rule (the mark a killed writer left, then every cell: ``ingest.collapsed``), rows of two
sources in the wrong one of ``scores`` / ``scores_displaced`` for the preference rule (``ingest.preference``),
and score files whose rows went missing (reported: `pace ingest` of their tree reloads them).
"""
from __future__ import annotations

import shutil

import duckdb

from ingest import collapsed, preference
from ingest.lake import lake_drift, lake_of, leftovers, mark_pending, pending, sync_lake
from warehouse.connect import schema_problem


def run_doctor(con: duckdb.DuckDBPyConnection, *, repair: bool = True) -> dict:
    lines, problems, repaired = [], [], []
    lake = lake_of(con)
    schema = schema_problem(con)
    if schema:
        problems.append(f"schema: {schema}")
    marked = pending(con)
    if marked:
        problems.append(f"lake: a writer stopped before updating {', '.join(marked)}")
    drift = lake_drift(con, lake)
    for benchmark, ((n_table, _), (n_lake, _)) in drift.items():
        problems.append(f"lake: {benchmark} has {n_lake:,} rows in the lake, {n_table:,} in scores"
                        + (" (same count, different content)" if n_table == n_lake else ""))
    stale = leftovers(lake)
    if stale:
        problems.append(f"lake: {len(stale)} leftover staging/trash folder(s) of killed writers")
    cells_stale = _collapsed_problems(con)
    problems += cells_stale
    moved = preference.drift(con)
    problems += [f"preference: {n:,} row(s) of {benchmark} sit in the wrong one of scores / scores_displaced for "
                 "the rule (written outside pace, or agentic_preference changed by hand)" for benchmark, n in moved.items()]
    missing = con.execute(f"""
        WITH present AS ({preference.PRESENT_ROWS})
        SELECT f.tree, CASE f.layout WHEN 'lm-eval samples' THEN 'import lm-eval'
                                     WHEN 'inspect log' THEN 'import inspect'
                                     WHEN 'openhands-index' THEN 'import openhands-index' ELSE 'ingest' END,
               count(*), sum(f.n_rows - coalesce(p.n, 0))
        FROM score_files f LEFT JOIN present p USING (path)
        WHERE coalesce(p.n, 0) <> f.n_rows GROUP BY ALL ORDER BY 1, 2""").fetchall()
    for tree, command, n_files, n_rows in missing:
        again = f"pace {command} {tree or 'TREE'}" + (" --map MAP" if command in ("import lm-eval", "import inspect")
                                                      else "")
        problems.append(f"scores: {n_files} file(s) of {tree or 'an unrecorded tree'} miss {n_rows:,} rows: "
                        f"`{again}` reloads them")
    if repair:
        if moved:
            con.execute("BEGIN TRANSACTION")
            try:
                rewrite = preference.refresh(con)
                mark_pending(con, rewrite)
                collapsed.refresh(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            marked = sorted(set(marked) | rewrite)
            repaired.append(f"moved {sum(moved.values()):,} row(s) of {', '.join(moved)} to where the preference "
                            "rule puts them")
        names = sorted(set(marked) | set(drift))
        if names:
            sync_lake(con, names, lake)
            repaired.append(f"rewrote lake partitions of {', '.join(names)} from scores")
        for path in stale:
            shutil.rmtree(path, ignore_errors=True)
        if stale:
            repaired.append(f"removed {len(stale)} leftover folder(s)")
        if schema:
            repaired.append("applied the current schema")
        if cells_stale:
            con.execute("BEGIN TRANSACTION")
            try:
                collapsed.refresh(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            n_cells = con.execute(f"SELECT count(*) FROM {collapsed.TABLE}").fetchone()[0]
            repaired.append(f"recomputed the stored collapsed cells from scores ({n_cells:,} cells)")
    lines += [f"problem: {p}" for p in problems] + [f"repaired: {r}" for r in repaired]
    n_rows = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    lines.append(f"{'ok' if not problems else ('repaired' if repair else 'found problems')}: "
                 f"{n_rows:,} score rows; lake {lake}")
    return {"problems": problems, "repaired": repaired, "lake": str(lake), "lines": lines}


def _collapsed_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Why the stored collapsed cells may differ from their rule: the mark a writer leaves until it has
    recomputed them, else a comparison of every cell (for writes made outside pace)."""
    if collapsed.is_stale(con):
        return ["collapsed cells: the stored cells are out of date (a writer stopped before recomputing them, "
                "or they were computed by another version of the rule)"]
    return [f"collapsed cells: {n:,} stored cell(s) of {benchmark} differ from the rule (collapsed_cells_live): "
            "scores were changed outside pace" for benchmark, n in collapsed.drift(con).items()]
