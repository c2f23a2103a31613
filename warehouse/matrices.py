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
    return Matrices(models, columns, X, target_names, P)


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
