"""Dense arrays for the proxy kernels, from the ``loocv_inputs`` SQL macro (sql/044).

Rows are the known models in byte-wise name order (the published model list order); source
columns are (benchmark, subdir, instance_id) sorted as strings; targets alphabetical: the layout
of spec §2. Missing cells are NaN; ``compat`` turns them into 0 as the published loader does
(:func:`published_arrays`), ``default`` keeps them missing.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa


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
        rows = [int(r) for r in rows]
        new = {r: i for i, r in enumerate(rows)}
        kept = np.asarray([[new[int(r)], int(c)] for r, c in (self.collapsed if self.collapsed is not None else [])
                           if int(r) in new], dtype=np.int64).reshape(-1, 2)
        return Matrices([self.models[r] for r in rows], self.columns, self.X[rows], self.targets,
                        [p[rows] for p in self.P], self.leaves, kept, self.leaf_benchmarks)

    def target_counts(self) -> np.ndarray:
        """(n, T) number of observed target instances behind each mean."""
        return np.stack([(~np.isnan(p)).sum(axis=1) for p in self.P], axis=1) if self.P else \
            np.zeros((self.X.shape[0], 0))


def list2d(rows: pa.Array, n_cols: int | None = None) -> np.ndarray:
    """An Arrow list<double> array of n equally long rows -> (n, S) float64 (NULL -> NaN)."""
    flat = rows.flatten().to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    n = len(rows)
    return flat.reshape(n, -1) if n and flat.size else np.zeros((n, n_cols or 0))


def inputs_to_arrays(x: pa.ListScalar, p: pa.ListScalar) -> tuple[np.ndarray, list[np.ndarray]]:
    """The ``x`` and ``p`` values of one ``loocv_inputs`` row -> X (n, S) and P [(n, N_t)]."""
    X = list2d(x.values) if x.is_valid else np.zeros((0, 0))
    P = [list2d(p.values[t].values) for t in range(len(p.values))] if p.is_valid else []
    return X, P


def _int_array(value: pa.Scalar, width: int | None = None) -> np.ndarray:
    if value is None or not value.is_valid:
        return np.zeros((0,) if width is None else (0, width), dtype=np.int64)
    if width is None:
        return np.asarray(value.values.to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = value.values.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.int64).reshape(-1, width)


def inputs_to_matrices(x: pa.ListScalar, p: pa.ListScalar, targets: list[str], models: list[str],
                       leaves: pa.Scalar | None = None, collapsed: pa.Scalar | None = None,
                       leaf_benchmarks: list[str] | None = None) -> Matrices:
    """One ``loocv_inputs`` row (as the UDFs receive it) -> Matrices (without the column keys)."""
    X, P = inputs_to_arrays(x, p)
    return Matrices(list(models or []), [], X, list(targets or []), P, _int_array(leaves), _int_array(collapsed, 2),
                    list(leaf_benchmarks or []))


def build_matrices(con: duckdb.DuckDBPyConnection, sources: list[str] | None = None,
                   targets: list[str] | None = None) -> Matrices:
    """Read the warehouse into dense arrays via ``loocv_inputs(sources, targets)``."""
    row = con.sql("SELECT * FROM loocv_inputs(?, ?)", params=[sources, targets]).to_arrow_table()
    columns = [tuple(r) for r in con.execute(
        "SELECT benchmark, subdir, instance_id FROM source_columns(?) ORDER BY col", [sources]).fetchall()]
    models = row.column("models")[0].as_py() or []
    target_names = row.column("targets")[0].as_py() or []
    if targets is not None and sorted(set(targets) - set(target_names)):
        raise ValueError(f"targets without any rows: {', '.join(sorted(set(targets) - set(target_names)))}")
    X, P = inputs_to_arrays(row.column("x")[0], row.column("p")[0])
    if X.size == 0:
        X = np.zeros((len(models), len(columns)))
    return Matrices(models, columns, X, target_names, P, _int_array(row.column("leaves")[0]),
                    _int_array(row.column("collapsed")[0], 2), row.column("leaf_benchmarks")[0].as_py() or [])


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
