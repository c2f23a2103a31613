"""The per-fit constants a one-model lookup reads instead of re-deriving them (issue 21): the leaf levels of a
fit's ability scale (proxy_leaves.level) and the inverse of each anchor curve (anchor_curve's rising_mean,
next_theta, next_mean) equal their rules (proxy_leaf_levels_live, anchor_curve_segments_live) after a fit, a
re-fit, an import of new anchors and a migration of a warehouse stored before them; and a lookup of one model
gives that model's rows of the whole view. Synthetic data only (the session's tiny fitted warehouse)."""
from __future__ import annotations

import math
import shutil

import duckdb
import pytest

from ingest import score_store
from ingest.derived import refresh
from ingest.openhands_index import import_index
from tests.helpers import write_index
from warehouse.anchors import fit_anchors, store_anchor_fit
from warehouse.connect import connect
from warehouse.fit import FitRequest, fit_and_store

TOLERANCE = 1e-12
LEVELS = """SELECT l.fit_id, l.benchmark, l.subdir, l.level, v.level
            FROM proxy_leaves AS l FULL OUTER JOIN proxy_leaf_levels_live AS v USING (fit_id, benchmark, subdir)"""
CURVES = """SELECT c.fit_id, c.target, c.theta, c.rising_mean, v.rising_mean, c.next_theta, v.next_theta,
                   c.next_mean, v.next_mean
            FROM anchor_curve AS c FULL OUTER JOIN anchor_curve_segments_live AS v USING (fit_id, target, theta)"""
LOOKED_UP = ("predictions", "source_predictions", "fit_predictions", "anchor_prior", "anchor_estimates")


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE) or (math.isnan(a) and math.isnan(b))
    return a == b


def _stored_equals_rule(con) -> tuple[int, int]:
    """Asserts every stored constant equals its rule; (leaf rows, curve points) checked."""
    levels = con.execute(LEVELS).fetchall()
    assert levels and all(r[3] is not None and _same(r[3], r[4]) for r in levels), \
        [r for r in levels if r[3] is None or not _same(r[3], r[4])][:3]
    curves = con.execute(CURVES).fetchall()
    assert curves and all(r[3] is not None and all(_same(r[k], r[k + 1]) for k in (3, 5, 7)) for r in curves), \
        [r for r in curves if r[3] is None or not all(_same(r[k], r[k + 1]) for k in (3, 5, 7))][:3]
    return len(levels), len(curves)


def _rows(con, view: str, model: str | None = None) -> list[tuple]:
    where, params = ("WHERE model = ?", [model]) if model else ("", [])
    return con.execute(f"SELECT * FROM {view} {where} ORDER BY ALL", params).fetchall()


def _assert_same_rows(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert all(_same(u, w) for u, w in zip(x, y)), (x, y)


def _lookups_are_the_view(con) -> int:
    """One model's lookup of each view gives that model's rows of the whole view; the rows compared."""
    models = [m for (m,) in con.execute("SELECT model FROM models ORDER BY model").fetchall()]
    compared = 0
    for view in LOOKED_UP:
        everything = _rows(con, view)
        for model in models:
            own = _rows(con, view, model)
            _assert_same_rows(own, [r for r in everything if r[0] == model])
            compared += len(own)
    return compared


@pytest.fixture
def copy(tiny_fitted, tmp_path):
    db, _ = tiny_fitted
    shutil.copy(db, tmp_path / "pace.duckdb")
    return tmp_path / "pace.duckdb"


def test_the_fit_stores_its_constants_and_a_lookup_is_its_rows_of_the_view(tiny_fitted):
    db, _ = tiny_fitted
    con = duckdb.connect(str(db), read_only=True)
    try:
        leaves, points = _stored_equals_rule(con)
        assert leaves >= 2 and points >= 2
        assert con.execute("SELECT count(DISTINCT fit_id) FROM proxy_leaves").fetchone()[0] == 2   # + restricted
        assert _lookups_are_the_view(con) > 0
        anchored = con.execute("SELECT count(*) FROM predictions WHERE method = 'anchors'").fetchone()[0]
        assert anchored > 0                                     # the anchors side is looked up too
    finally:
        con.close()


def test_a_refit_and_new_anchors_keep_them_in_step(copy, tmp_path):
    con = connect(copy)
    try:
        before = {r[0] for r in con.execute("SELECT DISTINCT fit_id FROM proxy_leaves").fetchall()}
        fitted = fit_and_store(con, FitRequest(count=10, B=10, seed=2, sources=["planbench", "lifbench", "ifeval"],
                                               tasks=("abs",), intervals=False))
        store_anchor_fit(con, fit_anchors(con, fitted.fit_id, exclude=["Orrin-4.5-Pro"], inner_folds=2))
        assert fitted.fit_id not in before
        assert con.execute("SELECT count(*) FROM proxy_leaves WHERE fit_id = ?", [fitted.fit_id]).fetchone()[0] > 0
        assert con.execute("SELECT count(*) FROM anchor_curve WHERE fit_id = ?", [fitted.fit_id]).fetchone()[0] > 0
        _stored_equals_rule(con)
        _lookups_are_the_view(con)

        # a new model's first anchors arrive (its metadata, then two gaia results): only scores change. The
        # tiny warehouse's `pace run` rows go first: a synthetic index is not imported beside them
        score_store.execute(con, "DELETE FROM scores WHERE origin = 'runner'")
        refresh(con)
        gaia = [i for (i,) in con.execute("SELECT DISTINCT instance_id FROM scores WHERE benchmark = 'gaia' "
                                          "ORDER BY 1 LIMIT 2").fetchall()]
        import_index(con, write_index(tmp_path / "index1", {}, metadata_only=["Xeno-2"], synthetic=True))
        newcomer = "SELECT target, method, anchors, predicted FROM predictions WHERE model = 'Xeno-2' ORDER BY 1"
        prior_only = dict((r[0], r[1:]) for r in con.execute(newcomer).fetchall())
        import_index(con, write_index(tmp_path / "index2", {"Xeno-2": {"gaia": {gaia[0]: True, gaia[1]: False}}},
                                      synthetic=True))
        anchored = dict((r[0], r[1:]) for r in con.execute(newcomer).fetchall())
        _stored_equals_rule(con)
        _lookups_are_the_view(con)
    finally:
        con.close()
    assert prior_only["gaia"][:2] == ("anchors", 0) and anchored["gaia"][:2] == ("anchors", 2)
    assert anchored["gaia"][2] != prior_only["gaia"][2]                     # the two anchors moved it


def test_a_warehouse_stored_before_the_constants_is_filled_by_its_migration(copy, tiny_fitted):
    original, _ = tiny_fitted
    con = duckdb.connect(str(original), read_only=True)
    try:
        expected = {view: _rows(con, view) for view in ("predictions", "anchor_estimates", "fit_predictions")}
    finally:
        con.close()
    raw = duckdb.connect(str(copy))                           # as an older pace left it: no such columns
    try:
        raw.execute("ALTER TABLE proxy_leaves DROP COLUMN level")
        for column in ("rising_mean", "next_theta", "next_mean"):
            raw.execute(f"ALTER TABLE anchor_curve DROP COLUMN {column}")
        raw.execute("UPDATE pace_meta SET value = 'older' WHERE key = 'schema'")
    finally:
        raw.close()
    con = connect(copy, read_only=True)                       # migrated by a brief write open
    try:
        _stored_equals_rule(con)
        for view, rows in expected.items():
            _assert_same_rows(_rows(con, view), rows)
    finally:
        con.close()
