"""BLAS threads inside the drivers, observed from inside a kernel call.

Every public driver of the compat pair and default methods must run with one BLAS thread (their
matrices are tiny; more threads only add synchronisation — the compat pair path ran ~3× slower
when ``single_blas`` sat on a helper instead of ``loocv_pair_frozen``). The compat Goal A drivers
deliberately keep the caller's threads: their reference figures were measured that way (see the
``models.compat.goal_a`` docstring). Each driver is run on tiny data under a 2-thread BLAS limit while a
spy on ``np.linalg.svd`` records how many threads BLAS had at that moment.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from models.compat import goal_a as compat
from models.default import goal_a as default
from models.compat import nested
from models.compat import goal_b as pair
from models.default import goal_b as pair_default
from models.common.autotune import DefaultGrid, PairGrid
from models.common.configs import AbsConfig, DefaultPairConfig, PairConfig

#: drivers that must limit BLAS to one thread
SINGLE = {"pair.loocv_pair_frozen", "pair.loocv_pair_autotune", "pair.fit_pair",
          "default.loocv_abs_default", "default.fit_abs_default",
          "pair_default.loocv_pair_default", "pair_default.fit_pair_default"}
#: compat Goal A: the caller's BLAS threads (reference figures depend on them)
AMBIENT = {"compat.loocv_abs_frozen", "compat.loocv_abs_autotune", "compat.fit_abs",
           "nested.loocv_abs_autotune_nested"}


def _public_drivers():
    """module.name of every ``loocv_*`` / ``fit_*`` function of the source matrix X that a driver
    module defines and exports."""
    out = set()
    for alias, mod in (("compat", compat), ("nested", nested), ("pair", pair), ("default", default),
                       ("pair_default", pair_default)):
        for name in mod.__all__:
            fn = inspect.unwrap(getattr(mod, name))
            if (name.startswith(("loocv_", "fit_")) and fn.__module__ == mod.__name__
                    and next(iter(inspect.signature(fn).parameters)) == "X"):
                out.add(f"{alias}.{name}")
    return out


def _data(n=7, S=80, N=20, seed=0):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n)
    X = (rng.random((n, S)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=S))))).astype(float)
    X = X[:, X.var(axis=0) > 1e-10]
    P = (rng.random((n, N)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=N))))).astype(np.float32)
    return X, P.mean(axis=1, keepdims=True), [P], ["t"]


A_CFG = {"t": AbsConfig(0.5, 2, 2, 0.5)}
B_CFG = {"t": PairConfig(0.5, 2, 2)}
SMALL = dict(count=12, B=5)
RUNNERS = {
    "compat.loocv_abs_frozen": lambda X, Y, P, T: compat.loocv_abs_frozen(X, Y, P, T, configs=A_CFG, **SMALL),
    "compat.loocv_abs_autotune": lambda X, Y, P, T: compat.loocv_abs_autotune(
        X, Y, P, T, q_grid=[0.5], nc_max=2, m_grid=(0.0, 1.0), **SMALL),
    "compat.fit_abs": lambda X, Y, P, T: compat.fit_abs(X, Y, P, T, configs=A_CFG, **SMALL),
    "nested.loocv_abs_autotune_nested": lambda X, Y, P, T: nested.loocv_abs_autotune_nested(
        X, Y, P, T, q_grid=[0.5], nc_max=2, m_grid=(0.0, 1.0), **SMALL),
    "pair.loocv_pair_frozen": lambda X, Y, P, T: pair.loocv_pair_frozen(
        X, Y, P, T, configs=B_CFG, a_configs=A_CFG, n_jobs=2, **SMALL),
    "pair.loocv_pair_autotune": lambda X, Y, P, T: pair.loocv_pair_autotune(
        X, Y, P, T, a_configs=A_CFG, nc_max=2, m_grid=(0.0, 1.0), **SMALL),
    "pair.fit_pair": lambda X, Y, P, T: pair.fit_pair(X, Y, P, T, configs=B_CFG, a_configs=A_CFG, **SMALL),
    "default.loocv_abs_default": lambda X, Y, P, T: default.loocv_abs_default(
        X, P, T, grid=DefaultGrid(q=(0.5,), nc=(1, 2), m=(0.0, 1.0)), n_jobs=2, **SMALL),
    "default.fit_abs_default": lambda X, Y, P, T: default.fit_abs_default(
        X, P, T, config={"t": AbsConfig(0.5, 2, 2, 0.5)}, grid=DefaultGrid(q=(0.5,), nc=(1, 2), m=(0.5,)),
        **SMALL),
    "pair_default.loocv_pair_default": lambda X, Y, P, T: pair_default.loocv_pair_default(
        X, P, T, grid=PairGrid(q=(0.5,), nc=(1, 2), m=(0.5,)), n_jobs=2, **SMALL),
    "pair_default.fit_pair_default": lambda X, Y, P, T: pair_default.fit_pair_default(
        X, P, T, grid=PairGrid(q=(0.5,), nc=(1,), m=(0.5,)), config={"t": DefaultPairConfig(0.5, 1, 0.5)},
        **SMALL),
}


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def test_every_public_driver_is_classified():
    assert SINGLE.isdisjoint(AMBIENT)
    assert _public_drivers() == SINGLE | AMBIENT == set(RUNNERS)


@pytest.mark.parametrize("name", sorted(SINGLE | AMBIENT))
def test_blas_threads_inside_driver(name, monkeypatch):
    seen = []
    svd = np.linalg.svd

    def spy(*args, **kwargs):
        if len(seen) < 20:
            seen.append(_blas_threads())
        return svd(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "svd", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() < 2:
            pytest.skip("this machine's BLAS cannot run 2 threads: nothing to observe")
        RUNNERS[name](*_data())
        assert _blas_threads() == 2  # the driver restored the caller's setting
    assert seen, f"{name} never reached an SVD"
    assert set(seen) == ({1} if name in SINGLE else {2}), (name, seen)
