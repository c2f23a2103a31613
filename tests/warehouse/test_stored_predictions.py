"""Stored predictions: served only while their inputs are unchanged, equal to the view's rows, kept by writers."""
from __future__ import annotations

import math
import shutil

import pytest

from ingest import score_store
from warehouse import stored_predictions
from warehouse.connect import connect
from warehouse.predict import read_predictions
from warehouse.storing import transaction

COLUMNS = ", ".join(stored_predictions.COLUMNS)


@pytest.fixture
def warehouse(tiny_fitted, tmp_path):
    """A copy of the tiny fitted warehouse (proxy fits, anchor item models, a restricted fit) with every
    model's predictions stored."""
    db = tmp_path / "stored.duckdb"
    shutil.copy(tiny_fitted[0], db)
    con = connect(db)
    with transaction(con):
        stored_predictions.refresh(con, full=True)
    yield con
    con.close()


def served(con, model: str) -> list[tuple]:
    """The stored rows a lookup may serve for ``model`` (none: it computes them from the view)."""
    return con.execute(f"SELECT {COLUMNS} FROM {stored_predictions.lookup_relation()} ORDER BY target",
                       [model, model, stored_predictions.rule_stamp()]).fetchall()


def view_rows(con, model: str) -> list[tuple]:
    return con.execute(f"SELECT {COLUMNS} FROM predictions WHERE model = ? ORDER BY target", [model]).fetchall()


def same(a: list[tuple], b: list[tuple]) -> bool:
    """Equal rows, numbers to 1e-12 (two reads of the view sum in DuckDB's thread order)."""
    return len(a) == len(b) and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and math.isclose(x, y, rel_tol=0, abs_tol=1e-12))
        for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def test_every_models_stored_rows_are_the_views(warehouse):
    con = warehouse
    models = [m for (m,) in con.execute("SELECT DISTINCT model FROM predictions ORDER BY 1").fetchall()]
    assert len(models) >= 7 and "Xeno-1" in models            # agentic rows only: the anchors' estimate
    methods = {r[0] for r in con.execute("SELECT DISTINCT method FROM stored_predictions").fetchall()}
    assert "anchors" in methods and len(methods) >= 2
    for model in models:
        rows = served(con, model)
        assert rows and same(rows, view_rows(con, model)), model
    assert stored_predictions.drift(con) == 0
    with transaction(con):
        assert stored_predictions.refresh(con) == 0               # nothing changed: nothing recomputed


def test_a_write_outside_pace_stops_serving_that_model_only(warehouse):
    con = warehouse
    model, other = [m for (m,) in con.execute(
        "SELECT DISTINCT model FROM stored_predictions WHERE method <> 'anchors' ORDER BY 1 LIMIT 2").fetchall()]
    before = view_rows(con, model)
    # one source score of the model flipped, as another DuckDB client would (no refresh)
    score_store.execute(con, """UPDATE scores SET score = 1 - score WHERE model = ? AND benchmark = 'planbench'
                                AND instance_id = (SELECT min(instance_id) FROM scores
                                                   WHERE model = ? AND benchmark = 'planbench')""", [model, model])
    assert not same(view_rows(con, model), before)           # the flipped instance weighs in the proxy
    assert served(con, model) == []                           # its stored rows are not served ...
    assert same(served(con, other), view_rows(con, other))    # ... another model's still are
    looked_up = read_predictions(con, model)                  # the lookup computes them from the view
    assert same([(p.target, p.predicted) for p in looked_up], [(r[1], r[2]) for r in view_rows(con, model)])
    with transaction(con):
        assert stored_predictions.refresh(con) == 1           # only that model is recomputed
    assert same(served(con, model), view_rows(con, model))


@pytest.mark.parametrize("edit", [
    "UPDATE proxy_fits SET intercept = intercept + 0.1 WHERE task = 'abs'",
    "UPDATE anchor_fits SET range_hi = range_hi + 1",
    "UPDATE benchmarks SET role = 'excluded' WHERE benchmark = 'lifbench'",
    "INSERT INTO model_metadata_set SELECT min(model), DATE '2031-01-01', now() FROM stored_predictions",
])
def test_an_edit_of_what_every_prediction_reads_stops_serving(warehouse, edit):
    con = warehouse
    model = con.execute("SELECT min(model) FROM stored_predictions").fetchall()[0][0]
    assert served(con, model)
    con.execute(edit)
    assert served(con, model) == []
    with transaction(con):
        stored_predictions.refresh(con)
    assert same(served(con, model), view_rows(con, model))


def test_sql_write_stops_serving_until_doctor(tiny_fitted, tmp_path):
    """`pace sql --write` may change a fit's weights, which no fingerprint reads: nothing is served after it
    until every model is recomputed (`pace doctor`, or the next fit)."""
    from warehouse.api import Warehouse

    db = tmp_path / "sql.duckdb"
    shutil.copy(tiny_fitted[0], db)
    wh = Warehouse(db)
    wh.doctor()                                                   # stores every model's predictions
    con = connect(db, read_only=True)
    model = con.execute("SELECT min(model) FROM stored_predictions WHERE method <> 'anchors'").fetchall()[0][0]
    assert served(con, model)
    con.close()
    wh.sql("UPDATE proxy_weights SET weight = 2 * weight", write=True)
    con = connect(db, read_only=True)
    assert served(con, model) == []
    assert same([(p.target, p.predicted) for p in read_predictions(con, model)],
                [(r[1], r[2]) for r in view_rows(con, model)])
    con.close()
    check = wh.doctor(check=True)                                 # reported (it was "ok"), not yet repaired
    assert any(line.startswith("stored predictions: not current") for line in check["problems"]), check
    report = wh.doctor()
    assert any("stored predictions of" in line for line in report["repaired"]), report
    assert not [line for line in wh.doctor(check=True)["problems"] if line.startswith("stored predictions")]
    con = connect(db, read_only=True)
    assert same(served(con, model), view_rows(con, model))
    con.close()


def test_fit_and_ingest_keep_the_stored_rows(tmp_path):
    """`Warehouse.fit` stores every model's predictions; ingesting a new model's tree afterwards stores its."""
    from ingest.synthetic import generate_tree
    from warehouse.api import Warehouse

    generate_tree(tmp_path / "tree", n_models=6, seed=2, scale=0.1)
    wh = Warehouse(tmp_path / "pace.duckdb")
    wh.ingest(tmp_path / "tree")
    report = wh.fit(count=10, B=8, seed=1, sources=["planbench", "lifbench", "ifeval"], anchors=False)
    con = connect(tmp_path / "pace.duckdb", read_only=True)
    models = [m for (m,) in con.execute("SELECT DISTINCT model FROM predictions ORDER BY 1").fetchall()]
    assert report.predictions_stored == len(models) == 6
    assert all(same(served(con, m), view_rows(con, m)) for m in models)
    con.close()
    # a new model: one model's source files under another name, in a tree of its own
    for path in (tmp_path / "tree").rglob("Talis-3.2.csv"):
        relative = path.relative_to(tmp_path / "tree")              # <benchmark>/[<subdir>/]<model>.csv
        if relative.parts[0] in ("planbench", "lifbench", "ifeval"):
            copy = tmp_path / "new" / relative.with_name("Newcomer-1.csv")
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, copy)
    shutil.copy(tmp_path / "tree" / "README.md", tmp_path / "new" / "README.md")   # its SYNTHETIC marker
    wh.ingest(tmp_path / "new")
    con = connect(tmp_path / "pace.duckdb", read_only=True)
    rows = served(con, "Newcomer-1")
    assert len(rows) == 4 and same(rows, view_rows(con, "Newcomer-1"))
    assert same([(p.target, p.predicted) for p in read_predictions(con, "Newcomer-1")], [(r[1], r[2]) for r in rows])
    con.close()


def test_setting_a_release_date_recomputes_that_models_rows(tiny_fitted, tmp_path):
    from warehouse.api import Warehouse

    db = tmp_path / "meta.duckdb"
    shutil.copy(tiny_fitted[0], db)
    wh = Warehouse(db)
    wh.doctor()
    con = connect(db, read_only=True)
    model = con.execute("SELECT min(model) FROM stored_predictions WHERE method <> 'anchors'").fetchall()[0][0]
    fingerprint = con.execute("SELECT fingerprint FROM stored_prediction_models WHERE model = ?",
                              [model]).fetchall()[0][0]
    con.close()
    wh.set_metadata(model, released="2020-01-02")
    con = connect(db, read_only=True)
    assert con.execute("SELECT fingerprint FROM stored_prediction_models WHERE model = ?",
                       [model]).fetchall()[0][0] != fingerprint
    assert same(served(con, model), view_rows(con, model))
    con.close()


def test_a_fits_weights_edited_by_another_client_are_found_by_doctor(tiny_fitted, tmp_path):
    """A fit's weights are in no fingerprint (reading them on every lookup would cost more than the lookup):
    an edit by another client is served until `pace doctor`, which finds and recomputes it."""
    import duckdb

    from warehouse.api import Warehouse

    db = tmp_path / "weights.duckdb"
    shutil.copy(tiny_fitted[0], db)
    wh = Warehouse(db)
    wh.doctor()
    raw = duckdb.connect(str(db))
    raw.execute("UPDATE proxy_weights SET weight = 3 * weight WHERE task = 'abs'")
    raw.close()
    check = wh.doctor(check=True, scan=True)
    assert any("stored predictions:" in p for p in check["problems"]), check
    assert any("stored predictions of" in line for line in wh.doctor()["repaired"])
    con = connect(db, read_only=True)
    models = [m for (m,) in con.execute("SELECT DISTINCT model FROM stored_predictions").fetchall()]
    assert models and all(same(served(con, m), view_rows(con, m)) for m in models)
    assert stored_predictions.drift(con) == 0
    con.close()


def test_a_missing_stored_row_serves_none_of_the_models(warehouse):
    con = warehouse
    model = con.execute("SELECT min(model) FROM stored_predictions").fetchall()[0][0]
    con.execute("DELETE FROM stored_predictions WHERE model = ? AND target = (SELECT min(target) FROM "
                "stored_predictions WHERE model = ?)", [model, model])
    assert served(con, model) == []
    assert len(read_predictions(con, model)) == len(view_rows(con, model))


def test_a_run_stores_its_models_predictions_when_it_ends(tiny_fitted, tmp_path):
    """`pace run` writes batches; its model's stored predictions are recomputed once, after the last one."""
    from types import SimpleNamespace

    from eval_runners.writes import Batch, Batches, Grade, RunTarget

    db = tmp_path / "run.duckdb"
    shutil.copy(tiny_fitted[0], db)
    con = connect(db)
    with transaction(con):
        stored_predictions.refresh(con, full=True)
    model = con.execute("SELECT min(model) FROM stored_predictions WHERE method <> 'anchors'").fetchall()[0][0]
    con.close()

    def write_grade(con, _grade):          # one source score flipped, as a graded call would write it
        score_store.execute(con, """UPDATE scores SET score = 1 - score WHERE model = ? AND benchmark = 'planbench'
                                    AND instance_id = (SELECT min(instance_id) FROM scores
                                                       WHERE model = ? AND benchmark = 'planbench')""",
                            [model, model])
        return 1

    writer = Batches(RunTarget(db), "run-test", write_grade, lambda _n: None)
    writer.write(Batch([], [Grade(SimpleNamespace(benchmark="planbench"), [], "ok", None)]))
    con = connect(db, read_only=True)
    assert served(con, model) == []                       # a batch mid-run: not recomputed yet
    con.close()
    writer._stopping = True
    writer.write(Batch())                                  # the run's end
    con = connect(db, read_only=True)
    assert same(served(con, model), view_rows(con, model))
    con.close()


def test_clearing_and_marking_touch_only_the_stored_predictions(warehouse):
    """A full refresh empties the two stored tables and mark_stale removes one pace_meta key: nothing else
    (scores, fits, other stores, the other pace_meta keys) changes."""
    con = warehouse
    kept = ("SELECT (SELECT count(*) FROM score_rows), (SELECT count(*) FROM score_sources), "
            "(SELECT count(*) FROM proxy_fits), (SELECT count(*) FROM proxy_weights), (SELECT count(*) FROM "
            "anchor_items), (SELECT count(*) FROM collapsed_cells), (SELECT count(*) FROM instance_stats), "
            "(SELECT list(key ORDER BY key) FILTER (WHERE key <> 'stored_predictions') FROM pace_meta)")
    before = con.execute(kept).fetchall()
    stored = con.execute("SELECT count(*) FROM stored_predictions").fetchall()[0][0]
    stored_predictions.mark_stale(con)
    assert con.execute("SELECT count(*) FROM pace_meta WHERE key = 'stored_predictions'").fetchall()[0][0] == 0
    with transaction(con):
        assert stored_predictions.refresh(con) > 0                # the stamp was gone: every model again
    assert con.execute(kept).fetchall() == before
    assert con.execute("SELECT count(*) FROM stored_predictions").fetchall()[0][0] == stored


def test_every_model_query_serves_the_stored_rows_only_while_each_models_hold(warehouse):
    """`pace export` reads every model's predictions through every_model_query: the stored rows while every
    model's may be served, else the view (a score written by another client: that model's rows change)."""
    con = warehouse

    def every():
        return con.execute(f"SELECT * FROM ({stored_predictions.every_model_query(con)}) ORDER BY model, target"
                           ).fetchall()

    assert "stored_predictions" in stored_predictions.every_model_query(con)
    rule = con.execute(f"SELECT {COLUMNS} FROM predictions ORDER BY model, target").fetchall()
    assert same(every(), rule)
    # the same column names and types as the view (SCHEMA.md describes the export's query)
    assert ([r[:2] for r in con.execute(f"DESCRIBE ({stored_predictions.every_model_query(con)})").fetchall()]
            == [r[:2] for r in con.execute(f"DESCRIBE (SELECT {COLUMNS} FROM predictions)").fetchall()])
    model = con.execute("SELECT min(model) FROM stored_predictions WHERE method <> 'anchors'").fetchall()[0][0]
    score_store.execute(con, "UPDATE scores SET score = 1 - score WHERE model = ? AND benchmark = 'planbench'",
                        [model])
    assert "stored_predictions" not in stored_predictions.every_model_query(con)
    changed = con.execute(f"SELECT {COLUMNS} FROM predictions ORDER BY model, target").fetchall()
    assert not same(changed, rule) and same(every(), changed)
    with transaction(con):
        stored_predictions.refresh(con)
    assert "stored_predictions" in stored_predictions.every_model_query(con) and same(every(), changed)
    con.execute("DELETE FROM stored_predictions WHERE model = ? AND target = 'gaia'", [model])  # one row lost
    assert "stored_predictions" not in stored_predictions.every_model_query(con) and same(every(), changed)
