"""Lake partitions written straight from ingested rows, beside the DuckDB insert.

For a benchmark whose every row comes from the ingest at hand (or that only gains rows: the file
then joins its partition), the partition file can be written from the rows as they are read, batch
by batch, instead of copying them back out of ``scores`` at the end: same columns and values as
:func:`ingest.lake.write_lake` (model, subdir, instance_id, score, metric_name, origin, source_ref,
recorded_at). The per-file columns are Arrow dictionaries over the
files of the slice, so Parquet stores each name once per column chunk.

Writes run on one background thread (pyarrow releases the GIL while encoding), at most two
batches behind the inserts, so memory stays bounded.
"""
from __future__ import annotations

import shutil
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ingest.lake import COMPRESSION, LAKE_TABLE

_IN_FLIGHT = 2          # batches queued for the writer


class RowsLakeWriter:
    """One Parquet file per fresh benchmark under ``staging/scores/benchmark=<name>/``.

    ``files``: per global file index ``fi`` its (benchmark, model, subdir, path)."""

    def __init__(self, staging: Path, fresh: set[str], files: list[tuple[str, str, str, str]],
                 recorded_at: datetime):
        self.staging, self.fresh = staging, set(fresh)
        self.benchmarks = sorted({f[0] for f in files})
        code = {b: k for k, b in enumerate(self.benchmarks)}
        self.bench = np.array([code[f[0]] for f in files], np.int32)   # per file, its index in self.benchmarks
        self.model = [f[1] for f in files]
        self.subdir = [f[2] for f in files]
        self.path = [f[3] for f in files]
        self.recorded_at = np.datetime64(recorded_at, "us")
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lake")
        self._pending: deque[Future] = deque()

    def add(self, rows: pa.Table, batch: list[int]) -> None:
        """Queue the rows of ``batch`` (files ``fi``); those of fresh benchmarks are written."""
        if not self.fresh or not rows.num_rows:
            return
        while len(self._pending) >= _IN_FLIGHT:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(self._write_batch, rows, batch))

    def _write_batch(self, rows: pa.Table, batch: list[int]) -> None:
        # A benchmark's rows lie in a few runs of the batch (it is in storage order, one run per block of
        # models): its part is those runs as slices, in row order, rather than a filtered copy of every column.
        of_row = self.bench[rows.column("fi").to_numpy()]       # integer codes: no string compared per row
        starts = np.flatnonzero(np.r_[True, of_row[1:] != of_row[:-1]]) if len(of_row) else np.zeros(0, np.int64)
        ends = np.r_[starts[1:], len(of_row)]
        runs: dict[int, list[pa.Table]] = {}
        for start, end in zip(starts.tolist(), ends.tolist()):
            runs.setdefault(int(of_row[start]), []).append(rows.slice(start, end - start))
        for code, parts in runs.items():
            benchmark = self.benchmarks[code]
            if benchmark in self.fresh:
                self._write(benchmark, pa.concat_tables(parts))

    def _write(self, benchmark: str, part: pa.Table) -> None:
        n = part.num_rows
        fi = part.column("fi").to_numpy()
        # the files of this slice, as dictionary entries; a file's rows are contiguous, so from the runs of fi
        starts = np.flatnonzero(np.r_[True, fi[1:] != fi[:-1]]) if n else np.zeros(0, np.int64)
        files, inverse = np.unique(fi[starts], return_inverse=True)
        local = pa.array(np.repeat(inverse.astype(np.int32), np.diff(np.r_[starts, n])))

        def per_file(values: list[str]) -> pa.DictionaryArray:
            return pa.DictionaryArray.from_arrays(local, pa.array([values[f] for f in files], pa.string()))

        table = pa.table({
            "model": per_file(self.model),
            "subdir": per_file(self.subdir),
            "instance_id": part.column("instance_id"),
            "score": part.column("score"),
            "metric_name": part.column("metric_name"),
            "origin": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array(["ingest"])),
            "source_ref": per_file(self.path),
            "recorded_at": pa.array(np.full(n, self.recorded_at), pa.timestamp("us")),
        })
        writer = self._writers.get(benchmark)
        if writer is None:
            folder = self.staging / LAKE_TABLE / f"benchmark={benchmark}"
            folder.mkdir(parents=True, exist_ok=True)
            writer = self._writers[benchmark] = pq.ParquetWriter(folder / "data_0.parquet", table.schema,
                                                                 store_schema=False, compression=COMPRESSION)
        writer.write_table(table)

    def close(self) -> None:
        """Wait for every queued write and finish the files (raises what a write raised)."""
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            for writer in self._writers.values():
                writer.close()
            self._pool.shutdown(wait=True)

    def discard(self, benchmarks) -> None:
        """Forget the files written for ``benchmarks`` (after :meth:`close`)."""
        for benchmark in benchmarks:
            shutil.rmtree(self.staging / LAKE_TABLE / f"benchmark={benchmark}", ignore_errors=True)

    def abort(self) -> None:
        """Stop after the writes in flight; the caller removes the staging folder."""
        for future in self._pending:
            future.cancel()
        self._pool.shutdown(wait=True)
        for writer in self._writers.values():
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the staging folder is removed anyway
                pass
