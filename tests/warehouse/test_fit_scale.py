"""`pace fit` with the paths it takes at scale forced on a small synthetic warehouse: K-fold residuals, the
chunked training basis with its leading singular vectors, the pair logistic on margins, one basis per
training block, the split inputs computed once. The fit must still be its own predictor and say what it did."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from models.default import basis
from models.default import goal_b_fold as pair_default_fold
from tests.helpers import synthetic_warehouse
from warehouse.connect import connect
from warehouse.fit import FitRequest, fit_and_store


@pytest.fixture(scope="module")
def db30(tmp_path_factory):
    return synthetic_warehouse(tmp_path_factory.mktemp("fit_scale"), n_models=30, seed=11, scale=0.15)[0]


def _fit(db, tmp_path, name):
    path = tmp_path / f"{name}.duckdb"
    shutil.copy(db, path)
    con = connect(path)
    try:
        report = fit_and_store(con, FitRequest(count=15, B=20, seed=1))
        predicted = {(m, t): p for m, t, p in con.execute(
            "SELECT model, target, predicted FROM predictions WHERE fit_id = ?", [report.fit_id]).fetchall()}
        temp = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall()[0][0]
    finally:
        con.close()
    return report, predicted, temp


def test_large_paths_fit_the_same_predictor_and_say_so(db30, tmp_path, monkeypatch):
    monkeypatch.setenv("PACE_KFOLD_ABOVE", "5")
    exact, exact_pred, _ = _fit(db30, tmp_path, "exact")
    assert not any("singular vectors" in w for w in exact.warnings)
    monkeypatch.setattr(basis, "LARGE_CELLS", 1000)
    monkeypatch.setattr(basis, "CHUNK", 500)
    monkeypatch.setattr(pair_default_fold, "MARGINS_ABOVE", 5)
    large, large_pred, temp = _fit(db30, tmp_path, "large")
    assert temp == 0                                        # the split inputs' temp tables are gone
    note = [w for w in large.warnings if "singular vectors" in w]
    assert note and "instead of a full SVD" in note[0] and f"{basis.LARGE_CELLS:,} cells" in note[0]
    assert any("10-fold held-out residuals" in w for w in large.warnings)
    # the stored rows are still the predictor, for both tasks
    assert all(gap <= 1e-9 for gap in large.view_gap.values()), large.view_gap
    assert all(gap <= 1e-9 for gap in large.pair_view_gap.values()), large.pair_view_gap
    # the same fit up to rounding (and the ties it can turn): predictions and intervals agree closely
    diffs = np.asarray([abs(large_pred[k] - exact_pred[k]) for k in exact_pred])
    assert diffs.size == 30 * len(exact.targets)
    assert np.median(diffs) < 1e-9 and diffs.max() < 1e-3, (np.median(diffs), diffs.max())     # seen: 9e-16
    for t in exact.targets:
        assert large.resid_lo[t] == pytest.approx(exact.resid_lo[t], abs=1e-3)
        assert large.resid_hi[t] == pytest.approx(exact.resid_hi[t], abs=1e-3)
        assert large.pair_calibration[t] == pytest.approx(exact.pair_calibration[t], rel=1e-3, abs=1e-3)
