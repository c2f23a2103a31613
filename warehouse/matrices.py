"""Dense arrays for the proxy kernels, from a fold's cells in long form (``fold_layout``, ``fold_cells``,
``fold_target_cells``: sql/036-038).

Rows are the known models in byte-wise name order (the published model list order); source
columns are (benchmark, subdir, instance_id) sorted as strings; targets alphabetical: the layout
of spec §2. Missing cells are NaN; ``compat`` turns them into 0 as the published loader does
(:func:`published_arrays`), ``default`` keeps them missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.plan import call_of


@dataclass
class Matrices:
    models: list[str]                 # n
    columns: list[tuple[str, str, str]]  # S source columns: (benchmark, subdir, instance_id)
    X: np.ndarray                     # (n, S) float64, NaN = no usable score
    targets: list[str]                # T, alphabetical
    P: list[np.ndarray]               # per target (n, N_t) float64, NaN = missing
    leaves: np.ndarray | None = None      # (S,) leaf index (benchmark, subdir) of each source column
    collapsed: np.ndarray | None = None   # (k, 2) [row, col] of source cells in collapsed cells
    leaf_benchmarks: list[str] | None = None   # (L,) the benchmark of each leaf
    # call_groups() of these columns, once worked out (a fold's subset keeps its columns, so it keeps them)
    _call_groups: np.ndarray | None = field(default=None, repr=False, compare=False)

    def column_benchmarks(self) -> list[str]:
        """(S,) the benchmark of each source column."""
        if self.columns:
            return [c[0] for c in self.columns]
        return [self.leaf_benchmarks[int(leaf)] for leaf in self.leaves]

    @property
    def n_leaves(self) -> int:
        return int(self.leaves.max()) + 1 if self.leaves is not None and self.leaves.size else 0

    def collapsed_mask(self) -> np.ndarray:
        """(n, S) True where a source cell collapsed (harness failure; sql/016_collapsed_cells.sql)."""
        mask = np.zeros(self.X.shape, dtype=bool)
        if self.collapsed is not None and self.collapsed.size:
            mask[self.collapsed[:, 0], self.collapsed[:, 1]] = True
        return mask

    def target_means(self) -> np.ndarray:
        """(n, T) mean over each model's observed target instances (NaN when it has none)."""
        out = np.full((self.X.shape[0], len(self.P)), np.nan)
        for t, p in enumerate(self.P):
            observed = ~np.isnan(p)
            count = observed.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, t] = np.where(count > 0, np.where(observed, p, 0.0).sum(axis=1) / np.maximum(count, 1), np.nan)
        return out

    def subset(self, rows) -> "Matrices":
        """The same matrices restricted to ``rows`` (collapsed cells renumbered)."""
        rows = np.asarray([int(r) for r in rows], dtype=np.int64)
        new_row = np.full(len(self.models), -1, dtype=np.int64)
        new_row[rows] = np.arange(len(rows))
        cells = (np.asarray(self.collapsed, dtype=np.int64).reshape(-1, 2) if self.collapsed is not None
                 else np.zeros((0, 2), np.int64))
        renumbered = new_row[cells[:, 0]]
        kept = np.column_stack([renumbered, cells[:, 1]])[renumbered >= 0].reshape(-1, 2)
        return Matrices([self.models[r] for r in rows], self.columns, self.X[rows], self.targets,
                        [p[rows] for p in self.P], self.leaves, kept, self.leaf_benchmarks, self._call_groups)

    def call_groups(self) -> np.ndarray:
        """(S,) int: source columns that one runner call scores together share a value (see
        ``warehouse.plan.call_of``); a model run on a proxy's instances also has their siblings."""
        if not self.columns:
            return np.arange(self.X.shape[1])
        if self._call_groups is None:
            self._call_groups = call_groups_of(self.columns)
        return self._call_groups

    def target_counts(self) -> np.ndarray:
        """(n, T) number of observed target instances behind each mean."""
        return np.stack([(~np.isnan(p)).sum(axis=1) for p in self.P], axis=1) if self.P else \
            np.zeros((self.X.shape[0], 0))


def _coo(cells: pa.Array, *fields: str) -> list[np.ndarray]:
    """The child arrays of an array of structs (sparse cells), as numpy arrays (NULL -> NaN)."""
    return [cells.field(f).to_numpy(zero_copy_only=False) for f in fields]


def _cell_chunks(cells):
    """The struct arrays of sparse cells: one array, the chunks of a chunked array, or a stream of arrays
    (e.g. a record batch reader's columns: cells scattered batch by batch, never all held at once)."""
    if isinstance(cells, pa.ChunkedArray):
        return cells.chunks
    if isinstance(cells, pa.Array):
        return [cells]
    return cells


def _int_array(value, width: int | None = None) -> np.ndarray:
    if value is None or (isinstance(value, pa.Scalar) and not value.is_valid):
        return np.zeros((0,) if width is None else (0, width), dtype=np.int64)
    values = value.values if isinstance(value, pa.Scalar) else value
    if width is None:
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = values.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.int64).reshape(-1, width)


def call_groups_of(columns: list[tuple[str, str, str]]) -> np.ndarray:
    """(S,) int per (benchmark, subdir, instance_id) column: equal for the columns one runner call
    scores together (``warehouse.plan.call_of``)."""
    keys = ["\x1f".join(call_of(*c)) for c in columns]
    _, group = np.unique(np.array(keys, dtype=object), return_inverse=True)
    return group.astype(np.int64)


def fold_row_to_matrices(models: list[str], n_cols: int, x: pa.Array, targets: list[str], t_cols: list[int],
                         p: pa.Array, leaves=None, collapsed=None, leaf_benchmarks: list[str] | None = None,
                         columns: list | None = None) -> Matrices:
    """A fold's sparse (row, col, value) cells and layout -> dense Matrices.

    x: the struct values (r, c, v) of the source cells (an array, or a stream of arrays); p: (t, r, c, v) of
    the target cells. Cells not listed are NaN (no usable score). Rows follow ``models`` (training models
    first)."""
    n = len(models)
    X = np.full((n, int(n_cols)), np.nan)
    for chunk in _cell_chunks(x):
        if len(chunk):
            r, c, v = _coo(chunk, "r", "c", "v")
            X[r, c] = v
    P = [np.full((n, int(k)), np.nan) for k in t_cols]
    for chunk in _cell_chunks(p):
        if len(chunk):
            t, r, c, v = _coo(chunk, "t", "r", "c", "v")
            for k, block in enumerate(P):
                sel = t == k
                block[r[sel], c[sel]] = v[sel]
    return Matrices(list(models), list(columns or []), X, list(targets), P, _int_array(leaves),
                    _int_array(collapsed, 2), list(leaf_benchmarks or []))


def fold_matrices(con: duckdb.DuckDBPyConnection, held_out: list[str] | None = None,
                  sources: list[str] | None = None, targets: list[str] | None = None) -> tuple[Matrices, int]:
    """One fold's matrices (its layout ``fold_layout(held_out, sources, targets)`` and its cells) and its number of
    training rows (rows ``n_train:`` are the held-out models). The cells are read in their long form
    (``fold_cells``, ``fold_target_cells``) as Arrow columns: DuckDB never builds the one-row list, which
    at 300 models x 100k instances needs more memory than the dense matrix itself."""
    held = list(held_out or [])
    meta = con.sql("SELECT models, n_train, n_cols, targets, t_cols, leaves, leaf_benchmarks, collapsed "
                   "FROM fold_layout(?::VARCHAR[], ?, ?)", params=[held, sources, targets]).to_arrow_table()
    columns = [tuple(r) for r in con.execute(
        "SELECT benchmark, subdir, instance_id FROM source_columns(?) ORDER BY col", [sources]).fetchall()]
    first = lambda name: meta.column(name)[0]  # noqa: E731
    target_names = first("targets").as_py() or []
    if targets is not None and sorted(set(targets) - set(target_names)):
        raise ValueError(f"targets without any rows: {', '.join(sorted(set(targets) - set(target_names)))}")
    p = con.sql("SELECT {'t': t, 'r': row, 'c': col, 'v': score} AS cell FROM fold_target_cells(?::VARCHAR[], ?)",
                params=[held, targets]).to_arrow_table().column("cell")
    # the source cells stream in batches (10^8 cells at 1,000 models: 1.5 GB as one Arrow table)
    x = (batch.column("cell") for batch in con.sql(
        "SELECT {'r': row, 'c': col, 'v': score} AS cell FROM fold_cells(?::VARCHAR[], ?)",
        params=[held, sources]).to_arrow_reader(1 << 20))
    m = fold_row_to_matrices(first("models").as_py() or [], first("n_cols").as_py(), x, target_names,
                             first("t_cols").as_py() or [], p, first("leaves"), first("collapsed"),
                             first("leaf_benchmarks").as_py(), columns)
    return m, int(first("n_train").as_py())


def build_matrices(con: duckdb.DuckDBPyConnection, sources: list[str] | None = None,
                   targets: list[str] | None = None) -> Matrices:
    """Every known model's matrices: the fold 'all' (no model held out)."""
    return fold_matrices(con, [], sources, targets)[0]


def published_arrays(X: np.ndarray, P: list[np.ndarray]):
    """The published loader's arrays: missing -> 0, float32 storage, zero-variance filter (§2.2-§2.4).

    X: (n, S) with NaN; P: per target (n, N_t) with NaN.
    Returns (X_v (n, S') float64, kept (S',) indices into X's columns, P32 list of float32, Y (n, T)).
    """
    X32 = np.nan_to_num(X, nan=0.0).astype(np.float32)
    kept = np.flatnonzero(X32.var(axis=0) > 1e-10)
    P32 = [np.nan_to_num(p, nan=0.0).astype(np.float32) for p in P]
    Y = np.stack([p.mean(axis=1) if p.shape[1] else np.zeros(p.shape[0], np.float32) for p in P32], axis=1)
    return X32[:, kept].astype(np.float64), kept, P32, Y
