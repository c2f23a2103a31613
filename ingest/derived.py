"""The stores derived from ``scores``, kept in step by one mechanism: the stored collapsed cells
(:mod:`ingest.collapsed`) and the summaries (:mod:`ingest.summaries`: counters, instance_stats).

Every write keeps each store equal to its rule:

- writers with one transaction (ingest, ``pace import``, ``--prune``, ``pace alias add``,
  ``pace benchmarks set``, and each batch ``pace run`` stores) call :func:`refresh` inside it, after their
  writes: all or nothing with them;
- the stored predictions (:mod:`warehouse.stored_predictions`) are not a store of this list: a lookup checks
  each model's fingerprint itself, so a store out of date costs speed, never a wrong answer, and nothing
  recomputes them on open. :func:`refresh` of every store recomputes the models whose inputs changed;
  :func:`mark_stale` stops serving any until ``pace fit`` or ``pace doctor`` recomputes them all;
- writers that run arbitrary SQL (``pace sql --write``, ``pace shell --write``) first :func:`mark_stale`
  (committed), write, then :func:`refresh_stale`. A process killed in between leaves the mark, and the
  next open of the warehouse recomputes (``warehouse.connect``). Ingest does the same for the
  summaries alone: it marks them in its transaction and recomputes them right after its commit (the
  rule scans committed rows about twice as fast as the rows a transaction has just appended).

Each store's mark is its stamp in ``pace_meta`` (the fingerprint of its rule): absent while a writer may
have left the store behind, different after the rule changed. ``pace doctor --check`` reports a marked
store (:func:`stale`); ``pace doctor`` compares every store with its rule (:func:`drift`) and
recomputes it.
"""
from __future__ import annotations

from contextlib import nullcontext

import duckdb

from ingest import collapsed, summaries
from warehouse import stored_predictions

#: name (as messages say it) -> module with is_stale / refresh / mark_stale / drift
STORES = {"collapsed cells": collapsed, "summaries": summaries}


def refresh(con: duckdb.DuckDBPyConnection, timed=None, names=None) -> None:
    """Recompute every store (or those ``names``) and stamp it. Runs inside the caller's transaction
    (after the writes). ``timed(phase)``, a context manager, times each store (phases ``collapsed``,
    ``summaries``). Every store: then also the stored predictions of the models whose inputs changed
    (phase ``predictions``; they read the stores)."""
    for name, store in STORES.items():
        if names is None or name in names:
            with timed(name.split()[0]) if timed else nullcontext():
                store.refresh(con)
    if names is None:
        with timed("predictions") if timed else nullcontext():
            stored_predictions.refresh(con)


def mark_stale(con: duckdb.DuckDBPyConnection) -> None:
    """Record that every store is about to fall behind (before writing, outside the writes' transactions),
    and that no stored prediction may be served until every model's is recomputed."""
    for store in STORES.values():
        store.mark_stale(con)
    stored_predictions.mark_stale(con)


def stale(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The stores whose mark says they may differ from their rule (cheap: reads the stamps only)."""
    return [name for name, store in STORES.items() if store.is_stale(con)]


def is_stale(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(stale(con))


def refresh_stale(con: duckdb.DuckDBPyConnection, names=None, timed=None) -> list[str]:
    """Recompute the marked stores (or ``names``), in a transaction of their own. Returns those recomputed."""
    todo = stale(con) if names is None else list(names)
    if not todo:
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        refresh(con, timed, todo)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return todo


def drift(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, int]]:
    """store -> {part: rows that differ from the rule} for every store that differs (a scan of ``scores``)."""
    return {name: found for name, store in STORES.items() if (found := store.drift(con))}
