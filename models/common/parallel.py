"""Parallel helpers of the drivers: a thread map over folds and single-threaded BLAS.

Every matrix of the proxy kernels is tiny (≤ 14 rows: 13 × 16k QRs, 13 × ≤ 100 SVDs, 156 × ≤ 10
logistic fits). Multi-threaded OpenBLAS on top of our own fold threads only adds synchronisation:
a 13 × 16k QR takes 13 ms single-threaded against ~0.35 s with 2 BLAS threads on a loaded 2-core
machine, and the compat pair path ran ~3× slower. ``single_blas`` limits BLAS to one thread for
the duration of a driver call (process-wide, so the fold threads of ``map_jobs`` inherit it).
"""
from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, List, Optional, TypeVar

from threadpoolctl import threadpool_limits

__all__ = ["Beside", "blas_limit", "single_blas", "map_jobs"]

T = TypeVar("T")
R = TypeVar("R")


def blas_limit() -> threadpool_limits:
    """Context manager: every loaded BLAS library runs one thread inside it."""
    return threadpool_limits(limits=1, user_api="blas")


def single_blas(fn: Callable[..., R]) -> Callable[..., R]:
    """Decorator: run ``fn`` under ``blas_limit()`` (drivers only; kernels inherit it)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with blas_limit():
            return fn(*args, **kwargs)
    return wrapper


def map_jobs(fn: Callable[[T], R], items: Iterable[T], n_jobs: Optional[int]) -> List[R]:
    """``[fn(x) for x in items]``, on ``n_jobs`` threads when n_jobs > 1 (results in input order)."""
    if n_jobs is None or n_jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=n_jobs) as ex:
        return list(ex.map(fn, items))


class Beside:
    """``fn()`` on its own thread, started at once, while the caller goes on; ``result()`` waits for it and
    returns its value or raises its exception. A daemon thread: a caller that fails first need not wait for
    it (the command exits), its result is then dropped."""

    def __init__(self, fn: Callable[[], R], name: str = "beside"):
        self._value: Optional[R] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], R]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:        # handed to result()'s caller
            self._error = exc

    def result(self) -> R:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
