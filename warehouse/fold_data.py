"""The matrices the evaluation UDFs read, named by a token instead of passed as one row.

The evaluation reads every known model's matrices once (``build_matrices``: the fold 'all', streamed
in long form from ``fold_cells``), registers them under a token for the duration of its queries, and
the UDFs take ``(data, held_out, ...)`` per fold row: a fold is a row subset of those matrices, training
models first in row order, then the held-out ones, exactly the layout of that fold's ``fold_matrix`` row
(sql/038). So no SQL value ever holds the warehouse, at any size.
"""
from __future__ import annotations

import contextlib
import threading
import uuid

from warehouse.matrices import Matrices

_DATA: dict[str, Matrices] = {}
_MEMO: dict[str, dict] = {}
_LOCK = threading.Lock()


@contextlib.contextmanager
def registered(m: Matrices):
    """A token for ``m`` that this process's UDFs resolve while the block runs."""
    token = f"matrices-{uuid.uuid4().hex}"
    _DATA[token] = m
    _MEMO[token] = {}
    try:
        yield token
    finally:
        _DATA.pop(token, None)
        _MEMO.pop(token, None)


def shared(token: str, key, compute):
    """``compute()`` once per (token, key) while ``token`` lives: work a UDF shares between rows that DuckDB
    may hand it in several vectors, from several threads at once (one leave-one-out pass serves every loo
    fold)."""
    resolve(token)
    with _LOCK:
        cell = _MEMO[token].setdefault(key, {"lock": threading.Lock()})
    with cell["lock"]:
        if "value" not in cell:
            cell["value"] = compute()
        return cell["value"]


def resolve(token: str, held_out: list[str] | None = None) -> tuple[Matrices, int]:
    """The fold's matrices (the training models in row order, then the held-out ones) and n_train."""
    try:
        m = _DATA[token]
    except KeyError:
        raise ValueError(f"no matrices registered as {token!r} in this process (see fold_data.registered)") from None
    held = set(held_out or [])
    if not held & set(m.models):
        return m, len(m.models)
    rows = [i for i, name in enumerate(m.models) if name not in held] + \
           [i for i, name in enumerate(m.models) if name in held]
    return m.subset(rows), sum(name not in held for name in m.models)


@contextlib.contextmanager
def one_udf_call_at_a_time(con):
    """DuckDB may call a UDF from several threads at once, each on part of the fold rows; every call copies
    its fold's rows of the matrices (800 MB at 1,000 models x 100k instances) and the kernels use both
    cores already. Inside the block the connection runs on one thread, so folds are fitted one after the
    other; its setting is restored after."""
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads)}")
