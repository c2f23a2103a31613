from __future__ import annotations

import pytest

from ingest.lake import sync_lake
from ingest.load import ingest_tree
from ingest.openhands_index import import_index
from ingest.synthetic import generate_tree
from tests.helpers import synthetic_warehouse, write_index
from warehouse.anchors import fit_anchors, store_anchor_fit
from warehouse.connect import connect
from ingest import score_store


@pytest.fixture(scope="session")
def synthetic_db(tmp_path_factory):
    """A warehouse holding the synthetic tree (seed 0, 14 models); returns its path."""
    return synthetic_warehouse(tmp_path_factory.mktemp("synthetic_wh"), n_models=14, seed=0)[0]


@pytest.fixture(scope="session")
def tiny_fitted(tmp_path_factory):
    """A tiny synthetic warehouse with every user view non-empty (fits for both tasks, LOOCV runs of
    both tasks) and its `pace export`; returns (db, export folder). Small on purpose: Spark runs on it."""
    from warehouse.evaluate import EvalRequest, compute_eval, store_eval
    from warehouse.export import export_parquet
    from warehouse.fit import FitRequest, fit_and_store

    tmp = tmp_path_factory.mktemp("tiny")
    generate_tree(tmp / "tree", n_models=7, seed=5, scale=0.1)
    db = tmp / "pace.duckdb"
    con = connect(db)
    ingest_tree(con, tmp / "tree", tmp / "lake")
    # the OpenHands Index views hold rows: one model's gaia run as the index has it (its first instance
    # flipped, so both sources disagree there), and a model with agentic results only
    first, gaia = con.execute("""SELECT min(model), list(instance_id ORDER BY instance_id) FILTER (WHERE score = 1)
                                 FROM scores WHERE benchmark = 'gaia' AND model = (SELECT min(model) FROM scores)
                              """).fetchone()
    index = write_index(tmp / "index", {first: {"gaia": {i: k > 0 for k, i in enumerate(gaia)}},
                                        "Xeno-1": {"gaia": {i: True for i in gaia}}}, synthetic=True)
    import_index(con, index)
    # one model's ifeval rows as if `pace run` had written them: models.origins then holds two values
    score_store.execute(con, """UPDATE scores SET origin = 'runner', source_ref = 'run:tiny'
                   WHERE benchmark = 'ifeval' AND model = (SELECT min(model) FROM scores)""")
    sync_lake(con, ["ifeval"])
    sources = ["planbench", "lifbench", "ifeval"]
    fitted = fit_and_store(con, FitRequest(count=12, B=10, seed=1, sources=sources))
    # the anchors item models, one model left out of them so that anchor_estimates serves it
    store_anchor_fit(con, fit_anchors(con, fitted.fit_id, exclude=["Orrin-4.5-Pro"], inner_folds=2))
    # a restricted fit, as `pace predict` makes for a model lacking a source benchmark (restricted_fits)
    fit_and_store(con, FitRequest(count=12, B=10, seed=1, sources=["planbench", "ifeval"], tasks=("abs",),
                                  intervals=False, restricted_for="Orrin-4.5-Pro"))
    for task in ("abs", "pair"):
        store_eval(con, compute_eval(con, EvalRequest(count=12, B=10, seed=1, sources=sources), task))
    export_parquet(con, tmp / "export")
    con.close()
    return db, tmp / "export"
