"""Folds are rows, selection is SQL (issue 11): eval_folds, fold_matrix, fold_selection_scores and the per-fold
kernel UDFs agree with the kernels they stand for. Synthetic data only (8 models, a small tree)."""
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


def test_fold_matrix_holds_the_fold_training_models_first(con):
    from warehouse.matrices import build_matrices, fold_matrices

    whole = build_matrices(con)
    held = [whole.models[2], whole.models[5]]
    fold, n_train = fold_matrices(con, held)
    assert n_train == len(whole.models) - 2 and fold.models[n_train:] == held
    order = [whole.models.index(name) for name in fold.models]
    assert np.array_equal(fold.X, whole.X[order], equal_nan=True)
    assert all(np.array_equal(a, b[order], equal_nan=True) for a, b in zip(fold.P, whole.P))
    assert int(con.execute("SELECT len(x) FROM fold_matrix([], NULL, NULL)").fetchone()[0]) == \
        int(np.isfinite(whole.X).sum())          # sparse: one cell per score, none for a missing one


def test_default_evaluation_over_fold_rows_equals_the_kernel_fitted_per_fold(con):
    """`pace loocv` of the default method (a regressor UDF per eval_folds row, an ability UDF per fold, SQL
    combining them) gives, for every held-out model, the prediction of ``models.shrinkage.fit_shrunk``
    fitted in process on that fold's training models; its configurations and selections are rows too."""
    from models.shrinkage import fit_shrunk
    from warehouse.evaluate import EvalRequest, compute_eval
    from warehouse.matrices import build_matrices

    targets = ["swebench", "gaia"]
    req = EvalRequest(method="default", count=10, B=10, seed=3, split="kfold-3", targets=targets)
    result = compute_eval(con, req, "abs")
    table = result.tables["loocv_predictions"]
    stored = {(m, t): p for _, m, t, p, *_ in zip(*(c.to_pylist() for c in table.columns))}
    m = build_matrices(con, targets=targets)
    folds: dict[str, list[str]] = {}
    for fold, model in con.execute("SELECT fold, model FROM split_folds('kfold-3') ORDER BY model").fetchall():
        folds.setdefault(fold, []).append(model)
    checked = 0
    for held in folds.values():
        rows = [i for i, name in enumerate(m.models) if name not in held] + [m.models.index(h) for h in held]
        fold = m.subset(rows)
        n_train = len(rows) - len(held)
        Y = fold.target_means()
        train = np.arange(n_train)
        fit = fit_shrunk(fold.X, Y, fold.targets, fold.leaves, fold.n_leaves,
                         train=train[np.isfinite(Y[train]).any(axis=1)], scale_rows=train,
                         collapsed=fold.collapsed_mask(), n_instances=fold.target_counts(), models=fold.models,
                         count=10, seed=3, call_group=fold.call_groups())
        pred = fit.predict(fold.X, np.arange(n_train, len(rows)))
        for k, name in enumerate(held):
            for t, target in enumerate(fold.targets):
                if np.isfinite(Y[n_train + k, t]):
                    assert stored[(name, target)] == pytest.approx(pred[k, t], abs=1e-12)
                    checked += 1
    assert checked >= 8 * len(targets)
    configs = result.tables["loocv_configs"].to_pylist()
    assert {(r["fold"], r["target"]) for r in configs} == {(h, t) for f in folds.values() for h in f for t in targets}
    selections = result.tables["loocv_selections"].to_pylist()
    per_fold = {(r["fold"], r["target"]) for r in selections}
    assert per_fold == {(h, t) for f in folds.values() for h in f for t in targets}
    assert all(r["side"] in ("H", "D", "HD") and r["weight"] is not None for r in selections)


def test_selection_scores_view_ranks_as_the_kernel(con):
    """fold_selection_scores (SQL corr of ranks + the basis UDF + window ranks) orders the instances as the
    default kernel's Pace part does on the same fold, and its strict selection is the kernel's."""
    from models.autotune import DefaultGrid
    from models.basis import MIN_OBS, TrainingBasis
    from models.default_fold import AbsTargetFit
    from models.link import logit
    from models.selection import strict_joint_select
    from warehouse.matrices import fold_matrices

    held = [con.execute("SELECT min(model) FROM target_means WHERE n_scored > 0").fetchall()[0][0]]
    m, n_train = fold_matrices(con, held)
    Y = m.target_means()
    count = 20
    compared = tied = 0
    for t, target in enumerate(m.targets):
        rows = np.asarray([i for i in range(n_train) if np.isfinite(Y[i, t])])
        bs = TrainingBasis(m.X, rows, np.zeros(0, np.int64), MIN_OBS)
        z = logit(np.clip(Y[rows, t], 1e-3, 1 - 1e-3))
        tf = AbsTargetFit(bs, z, bs.centred(m.X, rows), DefaultGrid(), count)
        sql = con.execute("""SELECT nc, list(col ORDER BY local_rank), list(col ORDER BY global_rank),
                                    list(relevance ORDER BY col)
                             FROM fold_selection_scores(?::VARCHAR[], NULL, [?]) GROUP BY nc ORDER BY nc""",
                          [held, target]).fetchall()
        assert sql, target
        kernel_rel = tf.absr[np.argsort(bs.rep_cols)]
        assert np.allclose(sql[0][3], kernel_rel, atol=1e-9)
        pos = {int(c): k for k, c in enumerate(bs.rep_cols)}
        sql_h = np.asarray([pos[c] for c in sql[0][1]])
        # the same descending sequence of scores: the orders differ only inside ties (|ds| <= 1e-9); the
        # kernel keeps the prefix the strict selection reads (3C + 2)
        k = tf.order_h.size
        assert k == min(bs.rep_cols.size, 3 * count + 2)
        assert np.allclose(tf.absr[sql_h][:k], tf.absr[tf.order_h], atol=1e-9)
        for nc, _, global_order, _ in sql:
            d_score = bs.lev[min(nc, bs.lev.shape[0]) - 1] * tf.absr
            sql_d = np.asarray([pos[c] for c in global_order])
            assert np.allclose(d_score[sql_d][:k], d_score[tf.order_d(nc)], atol=1e-9)
            for q in (0.0, 0.5, 1.0):
                ours = strict_joint_select(sql_h, sql_d, count, q)
                theirs = strict_joint_select(tf.order_h, tf.order_d(nc), count, q)
                a, b = set(ours.H) | set(ours.D), set(theirs.H) | set(theirs.D)
                compared += 1
                if a == b:
                    continue
                # a different set only where a tie decided: each instance in one set only is tied with one
                # in the other set only, on the H or the D-pt score
                only_a, only_b = sorted(a - b), sorted(b - a)
                assert len(only_a) == len(only_b)
                for x in only_a:
                    assert any(abs(tf.absr[x] - tf.absr[y]) <= 1e-9 or abs(d_score[x] - d_score[y]) <= 1e-9
                               for y in only_b)
                tied += 1
    assert compared and tied < compared


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


def test_fold_data_resolves_a_fold_as_its_fold_matrix_row_would_and_forgets_it_after(con):
    """A UDF's ``data`` token gives the fold's rows training-first, the layout of its fold_matrix row; outside
    the ``registered`` block the token is refused by name."""
    from warehouse.fold_data import registered, resolve
    from warehouse.matrices import build_matrices, fold_matrices

    whole = build_matrices(con)
    held = [whole.models[4], whole.models[1]]
    expected, expected_train = fold_matrices(con, held)
    with registered(whole) as token:
        fold, n_train = resolve(token, held)
        same, all_train = resolve(token, [])
    assert n_train == expected_train and fold.models == expected.models
    assert np.array_equal(fold.X, expected.X, equal_nan=True)
    assert np.array_equal(fold.collapsed_mask(), expected.collapsed_mask())
    assert same is whole and all_train == len(whole.models)
    with pytest.raises(ValueError, match=f"no matrices registered as '{token}'"):
        resolve(token, held)


@pytest.mark.parametrize("split", ["loo", "kfold-3"])
def test_default_pair_evaluation_over_fold_rows_equals_the_kernel(con, split):
    """`pace loocv pair` of the default method (a directed-prediction UDF per eval_folds row, SQL averaging
    each pair's two directions) gives the in-process kernel's symmetric margins and probabilities: for loo
    one leave-one-out pass, for another split a pass per fold with the fold's targets hidden."""
    from models.pair_default import loocv_pair_default
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
