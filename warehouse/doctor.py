"""`pace doctor`: find what has drifted and repair what can be derived again.

Checked: the schema (applied on the write open that runs the doctor), whether the lake is this
warehouse's own (its stamp, see :mod:`ingest.lake`: a lake of another warehouse is reported and
never touched), lake partitions marked pending by a writer that was killed, every benchmark's lake
partition against ``scores`` (row count and a content fingerprint; a file DuckDB cannot read is a
damaged partition), leftover staging / trash folders inside the lake, the stores derived from
``scores`` (stored collapsed cells, counters, instance_stats: ``ingest.derived``) against their rules,
rows of two sources in the wrong one of ``scores`` / ``scores_displaced`` for the preference rule
(``ingest.preference``), and score files whose rows went missing from ``scores`` (reported: `pace
ingest` of their tree reloads them).

``--check`` (``repair=False``) reads what was kept at write time and scans nothing: the stores' marks
(a writer killed before recomputing them), the lake partitions against the counts recorded when pace
wrote them (a partition whose files changed is read), the files' row counts against ``score_counts``,
and the preference rule (which reads the rows of contested cells only, none without an index import). A repair (or ``--check --scan``) compares everything with ``scores`` itself, so it also finds what other
DuckDB clients wrote.

:func:`rebuild_from_lake` goes the other way: a database file that is lost or damaged is rebuilt
from its lake, the durable copy of the scores.
"""
from __future__ import annotations

import os
import uuid
from datetime import datetime
from pathlib import Path

import duckdb

from ingest import derived, preference, score_store, summaries
from ingest.lake import (ID_KEY, LAKE_TABLE, NOT_OURS, claim_lake, damaged, has_partitions, lake_drift, lake_of,
                         leftovers, mark_pending, older_leftovers, remove_leftovers, owner_problem, pending, read_stamp, remember_lake, sync_lake)
from warehouse.connect import connect, describe_open_error, schema_problem
from warehouse.errors import UserError
from warehouse.settings import lake_path
from warehouse import stored_predictions
from ingest.lake import lake_benchmarks


def run_doctor(con: duckdb.DuckDBPyConnection, *, repair: bool = True, lake: str | os.PathLike | None = None,
               scan: bool = False) -> dict:
    """Check (and with ``repair``, repair) the warehouse on ``con``. ``problems`` lists what was found,
    ``repaired`` what was done, ``unrepaired`` what is left for the user. A check without ``scan``
    reads what was kept at write time only; a repair always compares everything with ``scores``."""
    scan = scan or repair
    lines, problems, repaired, unrepaired = [], [], [], []
    lake = lake_of(con, lake)
    schema = schema_problem(con)
    if schema:
        problems.append(f"schema: {schema}")
    marked = pending(con)
    foreign = owner_problem(con, lake)
    drift: dict[str, tuple] = {}
    stale: list[Path] = []
    if foreign:
        problems.append(f"lake: {foreign}; {NOT_OURS}")
        unrepaired.append(problems[-1])
        if marked:
            problems.append(f"lake: a writer stopped before updating {', '.join(marked)} (not repaired: the lake is "
                            "not this warehouse's)")
    else:
        if marked:
            problems.append(f"lake: a writer stopped before updating {', '.join(marked)}")
        drift = lake_drift(con, lake, stored=not scan)
        broken = damaged(drift)
        for benchmark, ((n_table, _), (n_lake, _)) in drift.items():
            if benchmark in broken:
                problems.append(f"lake: {benchmark} is damaged: {broken[benchmark]}")
            else:
                problems.append(f"lake: {benchmark} has {n_lake:,} rows in the lake, {n_table:,} in scores"
                                + (" (same count, different content)" if n_table == n_lake else ""))
        stale = leftovers(lake)
        if stale:
            problems.append(f"lake: {len(stale)} leftover staging/trash folder(s) of killed writers")
    older = older_leftovers(lake)
    if older:
        problems.append(f"lake: {len(older)} staging folder(s) beside the lake left by an older pace "
                        f"({older[0].name}, ...): not removed, as another warehouse may have written them; "
                        "delete them by hand when no pace command is running")
        unrepaired.append(problems[-1])
    stores = _store_problems(con, compare=scan)
    problems += list(stores.values())
    if stored_predictions.is_stale(con):
        problems.append("stored predictions: not current (ad-hoc SQL with --write, or a stopped writer): each "
                        "lookup computes its model's rows from the predictions view until they are recomputed")
    served_wrong = stored_predictions.drift(con) if scan else 0     # a read of every model's predictions
    if served_wrong:
        problems.append(f"stored predictions: {served_wrong:,} model(s)' stored rows differ from the predictions "
                        "view (a fit's rows, or a view, changed outside pace)")
    moved = preference.drift(con)      # also a hand change to agentic_preference; nothing without an index import
    problems += [f"preference: {n:,} row(s) of {benchmark} sit in the wrong one of scores / scores_displaced for "
                 "the rule (written outside pace, or agentic_preference changed by hand)" for benchmark, n in moved.items()]
    missing = con.execute(f"""
        WITH present AS ({preference.PRESENT_ROWS if scan or summaries.is_stale(con) else summaries.PRESENT_ROWS})
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
        unrepaired.append(problems[-1])          # the rows are in the files, not here: doctor cannot bring them back
    if repair:
        if moved:
            con.execute("BEGIN TRANSACTION")
            try:
                rewrite = preference.refresh(con)
                mark_pending(con, rewrite)
                derived.refresh(con)            # the moved rows' cells and counts (every store, stale or not)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            marked = sorted(set(marked) | rewrite)
            repaired.append(f"moved {sum(moved.values()):,} row(s) of {', '.join(moved)} to where the preference "
                            "rule puts them")
        elif stores:                # first: lake partitions written below are recorded with the new counts
            derived.refresh_stale(con, list(stores))
        if stores:
            n_cells, n_stats = con.execute("SELECT (SELECT count(*) FROM collapsed_cells), "
                                           "(SELECT count(*) FROM instance_stats)").fetchall()[0]
            repaired.append(f"recomputed the stored {' and '.join(stores)} from scores ({n_cells:,} collapsed "
                            f"cells, {n_stats:,} instance_stats rows)")
        # served again after `pace sql --write`; else those whose inputs changed
        n_models = stored_predictions.refresh_committed(con, full=bool(served_wrong))
        if n_models:
            repaired.append(f"recomputed the stored predictions of {n_models:,} model(s)")
        if not foreign:
            stamped = read_stamp(lake) is None and lake.exists()
            claim_lake(con, lake)
            if stamped:
                repaired.append(f"stamped {lake} as this warehouse's lake (every partition matched scores)")
            names = sorted(set(marked) | set(drift))
            if names:
                sync_lake(con, names, lake)
                repaired.append(f"rewrote lake partitions of {', '.join(names)} from scores")
            if stale:                            # inside our own lake, and no writer runs: we hold the lock
                repaired.append(f"removed {remove_leftovers(lake)} leftover folder(s)")
        if schema:
            repaired.append("applied the current schema")
    lines += [f"problem: {p}" for p in problems] + [f"repaired: {r}" for r in repaired]
    n_rows = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    verdict = "ok" if not problems else "found problems" if not repair else \
        "repaired" if not unrepaired else "repaired what it could"
    lines.append(f"{verdict}: {n_rows:,} score rows; lake {lake}")
    return {"problems": problems, "repaired": repaired, "unrepaired": unrepaired if repair else problems,
            "lake": str(lake), "lines": lines}


def _store_problems(con: duckdb.DuckDBPyConnection, *, compare: bool) -> dict[str, str]:
    """store -> why it may differ from its rule: the mark a writer leaves until it has recomputed it,
    else (``compare``) a comparison of every row (for writes made outside pace)."""
    found = {name: f"{name}: out of date (a writer stopped before recomputing them, or they were computed by "
                   "another version of the rule)" for name in derived.stale(con)}
    if compare:
        for name, parts in derived.drift(con).items():
            if name not in found:
                found[name] = (f"{name}: " + ", ".join(f"{n:,} row(s) of {part}" for part, n in parts.items())
                               + " differ from scores: scores were changed outside pace")
    return found


# ------------------------------------------------------------------------------------ --from-lake
def rebuild_from_lake(db: Path, lake: str | os.PathLike | None = None) -> dict:
    """Rebuild the warehouse file ``db`` from its lake (``lake``, else ``$PACE_LAKE``, else the
    folder beside ``db`` named after it): only when ``db`` is missing or cannot be opened, which is
    then moved aside (``<db>.damaged-<time>``), never deleted. The new file is built beside it and
    moved into place when complete; it keeps the lake's warehouse id, so the lake stays its own.

    Rebuilt: ``scores`` (every readable partition), a provenance row per ingested file (with no
    checksum, so the next `pace ingest` of the tree replaces those rows instead of adding them
    again), the roles of benchmarks new to the schema's defaults (``source``), the stored collapsed
    cells. Not in the lake, so lost: fits, evaluation runs, aliases, families, role changes, instance
    packs and the runner's runs and responses (the runner's scores are in the lake)."""
    lake = lake_path(db, lake)
    if not has_partitions(lake):
        raise UserError(f"no lake partitions ({LAKE_TABLE}/benchmark=*/) in {lake}: nothing to rebuild {db} from; "
                        "pass --lake DIR (or PACE_LAKE) to name the lake")
    if db.is_dir():
        raise UserError(f"{db} is a folder, not a warehouse file")
    if not db.parent.is_dir():
        raise UserError(f"folder {db.parent} does not exist: create it first, or check --db / PACE_DB")
    _refuse_working(db)
    built = db.with_name(f".{db.name}.rebuild-{uuid.uuid4().hex[:8]}")
    try:
        con = connect(built, )
        try:
            lines, unreadable = _fill(con, lake)
        finally:
            con.close()
        aside = _set_aside(db)
        if built.with_name(built.name + ".wal").exists():
            os.replace(built.with_name(built.name + ".wal"), db.with_name(db.name + ".wal"))
        os.replace(built, db)
    except BaseException:
        for leftover in (built, built.with_name(built.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    if aside:
        lines.insert(0, f"moved the damaged file aside: {aside.name} (delete it once the rebuilt warehouse serves you)")
    lines.append(f"rebuilt {db} from {lake}" + (f"; lost with their damaged files: {', '.join(unreadable)}"
                                                 if unreadable else ""))
    return {"lines": lines, "problems": [f"lake: {b} is damaged: {why}" for b, why in unreadable.items()],
            "lake": str(lake)}


def _refuse_working(db: Path) -> None:
    """Refuse when ``db`` opens as a warehouse (or is in use): --from-lake replaces only a lost or damaged file."""
    if not db.exists():
        return
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error as exc:
        if "in use by another process" in describe_open_error(db, exc):
            raise UserError(describe_open_error(db, exc)) from exc
        return                                    # damaged: the rebuild replaces it (moved aside)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database()").fetchall()]
        if "scores" not in tables and "score_rows" not in tables:     # the table, or (now) the view's rows
            raise UserError(f"{db} is a DuckDB file but not a pace warehouse (no scores table): --from-lake does not "
                            "replace it; choose another --db")
        for table in tables:                      # every block read: a damaged one fails here
            con.execute(f'SELECT count(*), sum(hash(t)::HUGEINT) FROM "{table}" AS t').fetchone()
        n = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    except duckdb.Error:
        return                                    # damaged
    finally:
        con.close()
    raise UserError(f"{db} opens and holds {n:,} score rows: --from-lake rebuilds only a lost or damaged warehouse; "
                    "move it away first to rebuild it anyway")


def _set_aside(db: Path) -> Path | None:
    if not db.exists():
        return None
    aside = db.with_name(f"{db.name}.damaged-{datetime.now():%Y%m%d-%H%M%S}")
    os.replace(db, aside)
    wal = db.with_name(db.name + ".wal")
    if wal.exists():
        os.replace(wal, aside.with_name(aside.name + ".wal"))
    return aside


def _fill(con: duckdb.DuckDBPyConnection, lake: Path) -> tuple[list[str], dict[str, str]]:
    """Load ``scores`` from the readable partitions of ``lake`` into the new warehouse on ``con``."""
    stamp = read_stamp(lake)
    if stamp and stamp.get("warehouse"):
        con.execute("INSERT OR REPLACE INTO pace_meta VALUES (?, ?)", [ID_KEY, stamp["warehouse"]])
    unreadable = damaged(lake_drift(con, lake))           # scores is empty: every partition differs
    readable = sorted(lake_benchmarks(lake) - set(unreadable))
    con.execute("BEGIN TRANSACTION")
    for benchmark in readable:
        glob = str(lake / LAKE_TABLE / f"benchmark={benchmark}" / "*.parquet").replace("'", "''")
        score_store.append(con, f"""
                        SELECT * FROM read_parquet('{glob}', hive_partitioning = true, hive_types_autocast = false,
                                                   union_by_name = true)
                        ORDER BY model, subdir, instance_id""")
    con.execute("""
        INSERT INTO score_files (path, sha256, model, file_model, benchmark, subdir, n_rows, n_duplicates,
                                 n_null_scores, layout, ingested_at)
        SELECT source_ref, '', any_value(model), any_value(model), any_value(benchmark), any_value(subdir),
               count(*), 0, count(*) FILTER (score IS NULL), 'rebuilt from the lake', max(recorded_at)
        FROM scores WHERE origin = 'ingest' GROUP BY source_ref""")
    con.execute("""INSERT INTO benchmarks SELECT DISTINCT benchmark, 'source' FROM scores
                   WHERE benchmark NOT IN (SELECT benchmark FROM benchmarks)""")
    derived.refresh(con)
    con.execute("COMMIT")
    remember_lake(con, lake)
    if stamp is None and not unreadable:
        claim_lake(con, lake)                     # a lake from before stamps: it now provably matches
    n_rows, n_models = con.execute("SELECT count(*), count(DISTINCT model) FROM scores").fetchone()
    return [f"loaded {n_rows:,} score rows of {n_models} models from {len(readable)} lake partitions"], unreadable
