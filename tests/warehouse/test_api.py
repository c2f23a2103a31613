"""The Python API (warehouse.api.Warehouse): the rules the command line applies hold for a script too."""
from __future__ import annotations

import doctest
import shutil

import pandas as pd
import pyarrow as pa
import pytest

import warehouse.api
import warehouse.predict
from ingest.synthetic import generate_tree
from warehouse import UserError, Warehouse

HELD_OUT = "Vesper-2.5-Flash"
SOURCES = ["planbench", "ifeval"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A tiny synthetic warehouse ingested and fitted through the API (one model left out of the fit)."""
    tmp = tmp_path_factory.mktemp("api")
    summary = generate_tree(tmp / "tree", n_models=7, seed=3, scale=0.1)
    wh = Warehouse(tmp / "pace.duckdb")
    report = wh.ingest(tmp / "tree")
    fit = wh.fit(method="instance", task="abs", sources=SOURCES, count=10, B=5, intervals=False, exclude=HELD_OUT)
    return tmp / "pace.duckdb", summary, report, fit


def _copy(fitted, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(fitted[0], db)
    return db


def test_ingest_fit_predict_and_sql_outputs_agree(fitted):
    db, summary, report, fit = fitted
    wh = Warehouse(db, read_only=True)
    assert report.models == sorted(summary.models) and report.rows > 1000
    assert HELD_OUT not in fit.models and len(fit.models) == 6

    table = wh.sql("SELECT model, count(*) AS n FROM scores GROUP BY model ORDER BY model")
    assert isinstance(table, pa.Table) and table.column("model").to_pylist() == sorted(summary.models)
    assert sum(table.column("n").to_pylist()) == report.rows
    frame = wh.sql("SELECT target, predicted FROM predictions WHERE model = ? ORDER BY target", [HELD_OUT],
                   output="pandas")
    assert isinstance(frame, pd.DataFrame) and list(frame.target) == ["gaia", "swebench", "swebench_multimodal",
                                                                     "swtbench"]
    columns, rows = wh.sql("SELECT 1 AS one, 'x' AS two", output="tuples")
    assert columns == ["one", "two"] and rows == [(1, "x")]

    prediction = wh.predict(HELD_OUT)
    assert {p.target: p.predicted for p in prediction.predictions} == pytest.approx(dict(zip(frame.target,
                                                                                             frame.predicted)))
    assert all(p.fit_id == fit.fit_id and p.coverage == 1.0 for p in prediction.predictions)
    assert prediction.interval_level == pytest.approx(0.8) and prediction.restricted_fit is None


def test_read_only_refuses_every_write_and_writes_nothing(fitted):
    db = fitted[0]
    wh = Warehouse(db, read_only=True)
    fits = wh.sql("SELECT count(*) AS n FROM proxy_fits").column("n")[0].as_py()
    for call, what in ((lambda: wh.fit(), "storing a fit"), (lambda: wh.loocv("abs"), "storing an evaluation"),
                       (lambda: wh.ingest(db.parent / "tree"), "ingest"),
                       (lambda: wh.sql("DELETE FROM scores", write=True), "opening for writing")):
        with pytest.raises(UserError, match=f"opened read-only: {what}"):
            call()
    with pytest.raises(UserError, match='"DELETE" .* read-only mode.*write=True'):
        wh.sql("DELETE FROM scores")
    assert wh.sql("SELECT count(*) AS n FROM proxy_fits").column("n")[0].as_py() == fits


def test_predict_refuses_low_coverage_unless_partial(fitted, tmp_path):
    """The coverage rule lives in the API: a model missing most of the proxy's instances is refused."""
    wh = Warehouse(_copy(fitted, tmp_path))
    wh.sql("""DELETE FROM scores WHERE model = ? AND (benchmark, subdir, instance_id) IN
              (SELECT benchmark, subdir, instance_id FROM proxy_weights WHERE task = 'abs' AND target = 'gaia'
               LIMIT 8)""", [HELD_OUT], write=True)
    with pytest.raises(UserError, match=f"{HELD_OUT} has scores for too few of the proxy's instances"):
        wh.predict(HELD_OUT, restrict=False)
    partial = wh.predict(HELD_OUT, restrict=False, allow_partial=True)
    assert min(p.coverage for p in partial.predictions) < 0.9
    with pytest.raises(UserError, match="no score rows for 'Nobody'"):
        wh.predict("Nobody")
    with pytest.raises(UserError, match="min_coverage must be in"):
        wh.predict(HELD_OUT, min_coverage=1.5)


def test_predict_needing_a_restricted_fit_on_an_unwritable_file_fails_before_fitting(fitted, tmp_path,
                                                                                     monkeypatch):
    """A read-only file system (or a lock) is found before minutes of fitting, and the message says why a
    prediction needs to write at all and how to avoid it."""
    wh = Warehouse(_copy(fitted, tmp_path))
    wh.sql("DELETE FROM scores WHERE model = ? AND benchmark = 'ifeval'", [HELD_OUT], write=True)
    real_connect = warehouse.api.connect

    def read_only_file_system(path, read_only=False, **kw):
        if not read_only:
            raise UserError(f"{path}: cannot open it for writing (read-only file system)")
        return real_connect(path, read_only=True, **kw)

    def no_fit(*args, **kw):
        raise AssertionError("fitted before finding the file unwritable")

    monkeypatch.setattr(warehouse.api, "connect", read_only_file_system)
    monkeypatch.setattr(warehouse.predict, "fit_restricted", no_fit)
    with pytest.raises(UserError, match=rf"{HELD_OUT} has no ifeval scores, so it needs a proxy restricted .*"
                                        r"read-only file system.*restrict=False"):
        wh.predict(HELD_OUT)
    assert wh.predict(HELD_OUT, restrict=False, allow_partial=True).restricted_fit is None


def test_plan_lists_the_owed_instances(fitted, tmp_path):
    wh = Warehouse(_copy(fitted, tmp_path))
    wh.sql("DELETE FROM scores WHERE model = ? AND benchmark = 'ifeval'", [HELD_OUT], write=True)
    plan = wh.plan(HELD_OUT)
    owed = wh.sql("""SELECT DISTINCT benchmark, subdir, instance_id FROM proxy_weights
                     WHERE benchmark = 'ifeval' AND abs(weight) > 1e-12""", output="tuples")[1]
    assert sorted(plan.rows) == sorted(owed) and plan.per_benchmark[0]["benchmark"] == "ifeval"
    assert plan.restricted == {"sources": ["planbench"], "missing": ["ifeval"], "fit_id": None, "loocv_mae": {}}


def test_loocv_refuses_an_option_the_method_ignores_before_computing(fitted, tmp_path):
    wh = Warehouse(_copy(fitted, tmp_path))
    with pytest.raises(UserError, match="method default does not use q "):
        wh.loocv("abs", q=0.5)
    with pytest.raises(UserError, match="method mean does not use count, B"):
        wh.loocv("abs", method="mean", count=10, B=5)
    assert wh.sql("SELECT count(*) AS n FROM loocv_runs").column("n")[0].as_py() == 0
    run = wh.loocv("abs", method="mean", sources="planbench ifeval", targets=["gaia", "swtbench"])
    assert [m["target"] for m in run.metrics] == ["gaia", "swtbench", "AVERAGE"]
    assert wh.sql("SELECT sources FROM loocv_runs WHERE run_id = ?", [run.run_id]).column(0).to_pylist() == [SOURCES]


def test_the_examples_in_the_docstrings_run():
    failures, tried = doctest.testmod(warehouse.api, optionflags=doctest.ELLIPSIS)
    assert tried >= 10 and failures == 0
