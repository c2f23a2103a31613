"""Folds are rows (eval_folds), a fold's inputs are the matrices' rows in its fold_models order, and the
evaluation is the fit's path: a held-out model's evaluation prediction is what `pace fit` on its fold's
training models serves for it through the `predictions` view. Synthetic data only (9 models, a small tree)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import synthetic_warehouse
from warehouse.connect import connect


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    return synthetic_warehouse(tmp_path_factory.mktemp("fold_views"), n_models=9, seed=7, scale=0.15)[0]


@pytest.fixture
def con(small_db):
    c = connect(small_db, read_only=True)
    yield c
    c.close()


def test_eval_folds_are_rows_per_fold_and_target(con):
    labelled = {m for (m,) in con.execute("SELECT DISTINCT model FROM target_means WHERE n_scored > 0").fetchall()}
    targets = {t for (t,) in con.execute("SELECT benchmark FROM benchmarks WHERE role = 'target'").fetchall()}
    loo = con.execute("SELECT fold, held_out, target FROM eval_folds('loo', NULL)").fetchall()
    assert {(f, tuple(h), t) for f, h, t in loo} == {(m, (m,), t) for m in labelled for t in targets}
    assert con.execute("SELECT fold, held_out FROM eval_folds('all', ['gaia'])").fetchall() == [("all", [])]
    kfold = con.execute("SELECT fold, held_out FROM eval_folds('kfold-4', ['gaia']) ORDER BY fold").fetchall()
    assert [f for f, _ in kfold] == ["k1", "k2", "k3", "k4"]
    held = [m for _, h in kfold for m in h]
    assert sorted(held) == sorted(labelled) and len(held) == len(set(held))      # a partition
    assert max(len(h) for _, h in kfold) - min(len(h) for _, h in kfold) <= 1


def test_fold_matrices_hold_the_fold_training_models_first(con):
    from warehouse.matrices import build_matrices, fold_matrices

    whole = build_matrices(con)
    held = [whole.models[2], whole.models[5]]
    fold, n_train = fold_matrices(con, held)
    assert n_train == len(whole.models) - 2 and fold.models[n_train:] == held
    order = [whole.models.index(name) for name in fold.models]
    assert np.array_equal(fold.X, whole.X[order], equal_nan=True)
    assert all(np.array_equal(a, b[order], equal_nan=True) for a, b in zip(fold.P, whole.P))
    assert int(con.execute("SELECT count(*) FROM fold_cells([], NULL)").fetchone()[0]) == \
        int(np.isfinite(whole.X).sum())          # sparse: one cell per score, none for a missing one


def test_default_evaluation_is_the_fit_on_the_fold_served_by_the_predictions_view(small_db, tmp_path):
    """`pace loocv` of the default method predicts each held-out model as `pace fit` on its fold's training
    models (--exclude the fold), read back through the plain-SQL `predictions` view, predicts it: one path
    (the fold's inputs, Method.fit's parts, the SQL formulas); its configurations and selections are rows."""
    import shutil

    from warehouse.evaluate import EvalRequest, compute_eval
    from warehouse.fit import FitRequest, fit_and_store

    db = tmp_path / "work.duckdb"
    shutil.copy(small_db, db)
    con = connect(db)
    try:
        targets = ["swebench", "gaia"]
        result = compute_eval(con, EvalRequest(method="default", count=10, seed=3, split="kfold-3", targets=targets),
                              "abs")
        stored = {(r["model"], r["target"]): r["predicted"] for r in result.tables["loocv_predictions"].to_pylist()}
        folds: dict[str, list[str]] = {}
        for fold, model in con.execute("SELECT fold, model FROM split_folds('kfold-3') ORDER BY model").fetchall():
            folds.setdefault(fold, []).append(model)
        checked = 0
        for held in folds.values():
            fit_and_store(con, FitRequest(count=10, seed=3, targets=targets, exclude=held, tasks=("abs",),
                                          intervals=False))
            served = dict(((m_, t), p) for m_, t, p in con.execute(
                "SELECT model, target, predicted FROM predictions WHERE list_contains(?, model)", [held]).fetchall())
            for key, value in served.items():
                if stored.get(key) is not None:
                    assert stored[key] == pytest.approx(value, abs=1e-9), key
                    checked += 1
        assert checked >= 8 * len(targets)
        configs = result.tables["loocv_configs"].to_pylist()
        assert {(r["fold"], r["target"]) for r in configs} == {(h, t) for f in folds.values() for h in f
                                                                for t in targets}
        selections = result.tables["loocv_selections"].to_pylist()
        per_fold = {(r["fold"], r["target"]) for r in selections}
        assert per_fold == {(h, t) for f in folds.values() for h in f for t in targets}
        assert all(r["side"] in ("H", "D", "HD") and r["weight"] is not None for r in selections)
    finally:
        con.close()


def test_fit_above_the_kfold_threshold_uses_kfold_residuals_and_says_so(small_db, tmp_path, monkeypatch):
    import shutil

    from warehouse.fit import FitRequest, fit_and_store

    db = tmp_path / "work.duckdb"
    shutil.copy(small_db, db)
    con = connect(db)
    try:
        monkeypatch.setenv("PACE_KFOLD_ABOVE", "3")
        report = fit_and_store(con, FitRequest(count=10, B=10, seed=2, targets=["swebench"], tasks=("abs",)))
        assert any("10-fold held-out residuals" in w and "PACE_KFOLD_ABOVE" in w for w in report.warnings)
        assert all(np.isfinite(report.resid_lo[t]) and report.resid_lo[t] < report.resid_hi[t] for t in report.targets)
        monkeypatch.setenv("PACE_KFOLD_ABOVE", "many")
        with pytest.raises(ValueError, match="PACE_KFOLD_ABOVE must be an integer >= 2, not 'many'"):
            fit_and_store(con, FitRequest(count=15, B=10, seed=2, targets=["gaia"], tasks=("abs",)))
    finally:
        con.close()


def test_a_fold_of_the_evaluation_is_its_fold_matrices(con):
    """Folds.fold gives a fold's rows training-first, the layout fold_layout / fold_cells give it in SQL."""
    from warehouse.evaluate import read_folds
    from warehouse.matrices import build_matrices, fold_matrices

    whole = build_matrices(con)
    folds = read_folds(con, "kfold-3", whole, None)
    for name, held in folds.held_out.items():
        expected, expected_train = fold_matrices(con, held)
        fold = folds.fold(name)
        assert fold.n_train == expected_train and fold.matrices.models == expected.models
        assert np.array_equal(fold.matrices.X, expected.X, equal_nan=True)
        assert np.array_equal(fold.matrices.collapsed_mask(), expected.collapsed_mask())
    every = read_folds(con, "all", whole, None)
    assert every.held_out == {"all": []} and every.fold("all").matrices is whole


@pytest.mark.parametrize("split", ["loo", "kfold-3"])
def test_default_pair_evaluation_over_fold_rows_equals_the_kernel(con, split):
    """`pace loocv pair` of the default method (directed predictions per fold, each pair's two directions
    averaged) gives the kernel's own symmetric margins and probabilities: for loo one leave-one-out pass,
    for another split a pass per fold with the fold's targets hidden."""
    from models.default.goal_b import loocv_pair_default
    from warehouse.evaluate import EvalRequest, compute_eval
    from warehouse.matrices import build_matrices

    req = EvalRequest(method="default", count=15, B=10, seed=5, split=split, targets=["gaia", "swebench"])
    result = compute_eval(con, req, "pair")
    m = build_matrices(con, targets=req.targets)
    folds: dict[str, list[str]] = {}
    for fold, model in con.execute("SELECT fold, model FROM split_folds(?)", [split]).fetchall():
        folds.setdefault(fold, []).append(model)
    expected_margin = np.full((len(m.models),) * 2 + (2,), np.nan)
    expected_prob = expected_margin.copy()
    for held in folds.values() if split != "loo" else [[]]:
        rows = [m.models.index(h) for h in held]
        P = [p.copy() for p in m.P]
        for p in P:
            p[rows] = np.nan
        kernel = loocv_pair_default(m.X, P, m.targets, models=m.models, count=15, B=10, seed=5)
        take = rows or list(range(len(m.models)))
        expected_margin[take], expected_prob[take] = kernel.margins[take], kernel.prob[take]
    index, t_index = {n: i for i, n in enumerate(m.models)}, {t: k for k, t in enumerate(m.targets)}
    checked = 0
    for row in result.tables["loocv_pair_predictions"].to_pylist():
        _, model, opponent, target, _, margin, prob, _ = row.values()
        want = expected_margin[index[model], index[opponent], t_index[target]]
        if margin is None:
            assert not np.isfinite(want)
            continue
        assert margin == pytest.approx(want, abs=1e-12)
        assert prob == pytest.approx(expected_prob[index[model], index[opponent], t_index[target]], abs=1e-12)
        checked += 1
    assert checked >= 8 * 7 * 2
    held_models = {m_ for f in folds.values() for m_ in f}
    configs = result.tables["loocv_configs"].to_pylist()
    assert {(c["fold"], c["target"]) for c in configs} == {(h, t) for h in held_models for t in req.targets}
    assert all(c["cal_a"] is not None for c in configs)
