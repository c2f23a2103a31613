"""Folds are rows, selection is SQL (issue 11): eval_folds, fold_matrix, fold_selection_scores and the per-fold
kernel UDF agree with the kernels they stand for. Synthetic data only (8 models, a small tree)."""
from __future__ import annotations

import numpy as np
import pytest

from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from warehouse.connect import connect


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fold_views")
    generate_tree(tmp / "tree", n_models=9, seed=7, scale=0.15)
    db = tmp / "pace.duckdb"
    con = connect(db, create=True)
    ingest_tree(con, tmp / "tree", tmp / "lake")
    con.close()
    return db


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


def test_default_evaluation_per_fold_equals_the_kernel_over_the_whole_split(con):
    """The per-fold UDF path of `pace loocv` (one fold_matrix row per fold) gives the predictions of the
    in-process kernel over the split (the path `pace fit`'s interval residuals take)."""
    from warehouse import kernels
    from warehouse.evaluate import EvalRequest, compute_eval
    from warehouse.matrices import build_matrices

    targets = ["swebench"]
    req = EvalRequest(method="default", count=10, B=10, seed=3, split="kfold-3", targets=targets)
    result = compute_eval(con, req, "abs")
    table = result.tables["loocv_predictions"]
    stored = {(m, t): p for _, m, t, p, *_ in zip(*(c.to_pylist() for c in table.columns))}
    m = build_matrices(con, targets=targets)
    folds = {}
    for fold, model in con.execute("SELECT fold, model FROM split_folds('kfold-3')").fetchall():
        folds.setdefault(fold, []).append(model)
    inproc, _ = kernels.METHODS["default"](m, {**req.params(), "folds": list(folds.values())})
    checked = 0
    for i, model in enumerate(m.models):
        for t, target in enumerate(m.targets):
            if np.isfinite(inproc.pred[i, t]):
                assert stored[(model, target)] == pytest.approx(inproc.pred[i, t], abs=1e-12)
                checked += 1
    assert checked >= 8 * len(m.targets)


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
