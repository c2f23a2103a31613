"""How a run writes to the warehouse: in short transactions, so other processes read between them.

A run lasts hours; holding the warehouse's write lock that long would lock out every reader
(``pace status``, ``predict``, ``sql``, ``plan``). Instead the run opens the file, writes a batch and
closes it again (:class:`RunTarget`), and every batch leaves the warehouse complete (:class:`Batches`):

* one transaction holds the batch's responses (paid answers, with their errors), its grades (score
  rows and ``runner_calls`` markers), the run's heartbeat, the lake marker of the benchmarks it
  touched, and the stored collapsed cells recomputed from the new scores; then the lake partitions are
  rewritten (``ingest.lake.sync_lake``). A reader never sees answers without their grades or stale
  collapsed cells; a kill between the commit and the lake leaves the marker the next write open
  finishes (``warehouse.connect``); a kill before the commit loses only that batch, whose calls the
  next run makes again.
* a batch is written as soon as the previous one is done (group commit: answers wait for milliseconds
  on a small warehouse), but the writer rests at least as long as its last batch took, so it holds
  the lock at most half the time however large the warehouse is.
* when the file is busy (a long reader, an open ``pace shell``), the writer waits for it (up to
  ``wait`` seconds) and the run starts no new call while more than ``max_pending`` answers wait to be
  stored: it never pays for many answers it cannot keep.

A run given an open connection instead of a path (tests, a script holding the file) writes its batches
on that connection; nothing else changes.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import duckdb

from eval_runners.cache import DuckDBStore
from eval_runners.client import CallResult
from ingest.derived import STORES, refresh as refresh_derived
from ingest.lake import mark_pending, sync_lake
from warehouse import stored_predictions

#: how long a run waits for the warehouse to store a batch (other processes may hold it that long)
STORE_WAIT_S = 3600.0


class RunTarget:
    """Where a run writes: a warehouse path (opened per batch) or a connection held by the caller."""

    def __init__(self, target, wait: float | None = None):
        self.con = target if isinstance(target, duckdb.DuckDBPyConnection) else None
        self.path = None if self.con is not None else Path(target)
        self.wait = wait

    @contextlib.contextmanager
    def session(self, wait: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A write connection for one short piece of work, closed after it (unless held by the caller)."""
        if self.con is not None:
            yield self.con
            return
        from warehouse.connect import connect

        con = connect(self.path, create=False, wait=self.wait if wait is None else wait)
        try:
            yield con
        finally:
            con.close()


@dataclass
class Grade:
    """A call's grade, ready to store: its score rows, status and detail (see ``run.grade_unit``)."""
    unit: object
    rows: list
    status: str
    detail: str | None


@dataclass
class Batch:
    responses: list = field(default_factory=list)     # (key, model, messages, params, CallResult, meta)
    grades: list[Grade] = field(default_factory=list)

    def __bool__(self):
        return bool(self.responses or self.grades)


class Batches:
    """Answers and grades waiting to be stored, written in short transactions by one task (:meth:`loop`).

    ``put`` takes a response as the client's cache does (every answer and every failed call);
    ``write_grade(con, grade) -> rows written`` stores one grade inside the batch's transaction;
    ``on_written(rows)`` is told how many score rows each batch wrote.
    """

    def __init__(self, target: RunTarget, run_id: str, write_grade: Callable, on_written: Callable[[int], None],
                 *, heartbeat_s: float = 30.0, max_pending: int = 16, wait: float = STORE_WAIT_S):
        self.target, self.run_id = target, run_id
        self.write_grade, self.on_written = write_grade, on_written
        self.heartbeat_s, self.max_pending, self.wait = heartbeat_s, max(1, max_pending), wait
        self.pending = Batch()
        self._lock = threading.Lock()          # pending is filled by the event loop, taken by the writer thread
        self._wake: asyncio.Event | None = None
        self._room: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = False
        self._unstored = 0                     # score rows written since the stored predictions were refreshed

    def put(self, key, model, messages, params, result: CallResult, meta: dict | None) -> None:
        with self._lock:
            self.pending.responses.append((key, model, messages, params, result, meta))
        self._changed()

    def add_grade(self, grade: Grade) -> None:
        with self._lock:
            self.pending.grades.append(grade)
        self._changed()

    def _changed(self) -> None:
        if self._wake is not None:
            self._wake.set()
            if len(self.pending.responses) >= self.max_pending:
                self._room.clear()

    def _take(self) -> Batch:
        with self._lock:
            batch, self.pending = self.pending, Batch()
        return batch

    async def room(self) -> None:
        """Wait while too many answers wait to be stored (the warehouse is busy)."""
        if self._room is not None:
            await self._room.wait()

    # ----------------------------------------------------------------------------------- writing
    def write(self, batch: Batch) -> None:
        """Store ``batch`` in one transaction, then bring the lake in step. On failure the batch goes
        back to the pending ones (nothing is dropped) and the error is raised."""
        try:
            with self.target.session(self.wait) as con:
                written = self._transaction(con, batch)
                sync_lake(con)
                self._unstored += written
                if self._stopping and self._unstored:      # the run's last batch: its model's stored
                    stored_predictions.refresh_committed(con)   # predictions (lookups meanwhile: the view)
                    self._unstored = 0
        except BaseException:
            with self._lock:
                self.pending = Batch(batch.responses + self.pending.responses, batch.grades + self.pending.grades)
            raise
        self.on_written(written)

    def _transaction(self, con: duckdb.DuckDBPyConnection, batch: Batch) -> int:
        store = DuckDBStore(con, self.run_id)
        con.execute("BEGIN TRANSACTION")
        try:
            for response in batch.responses:
                store.put(*response)
            written = sum(self.write_grade(con, g) for g in batch.grades)
            con.execute("UPDATE runs SET heartbeat_at = ? WHERE run_id = ?", [_now(), self.run_id])
            if written:
                mark_pending(con, {g.unit.benchmark for g in batch.grades})
                refresh_derived(con, names=list(STORES))    # the stored predictions once, at the end
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return written

    async def loop(self) -> None:
        """Write batches until :meth:`stop`: as soon as there is something to store (once the last
        batch's duration has passed again), and every ``heartbeat_s`` anyway (the run's heartbeat)."""
        self._wake, self._room, self._stop = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._room.set()
        try:
            await self._batches()
        finally:
            self._room.set()              # a failed writer must not leave the run waiting for room

    async def _batches(self) -> None:
        while True:
            if not self._stopping and not self.pending:
                try:
                    await asyncio.wait_for(self._wake.wait(), self.heartbeat_s)
                except asyncio.TimeoutError:
                    pass
            self._wake.clear()
            started = time.monotonic()
            batch = self._take()
            if batch or not self._stopping or self._unstored:     # last: the stored predictions too
                await asyncio.to_thread(self.write, batch)
            if len(self.pending.responses) < self.max_pending:
                self._room.set()
            if self._stopping and not self.pending:
                return
            if not self._stopping:
                try:                                 # rest: hold the lock at most half the time
                    await asyncio.wait_for(self._stop.wait(), time.monotonic() - started)
                except asyncio.TimeoutError:
                    pass

    async def stop(self, task: asyncio.Task) -> None:
        """Let the writer store what is pending and end."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
            self._stop.set()
        await task

    def drain(self) -> None:
        """Store whatever is still pending, synchronously (after the event loop stopped, e.g. Ctrl-C)."""
        batch = self._take()
        if batch:
            self.write(batch)


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)
