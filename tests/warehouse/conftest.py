from __future__ import annotations

import pytest

from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from warehouse.connect import connect


@pytest.fixture(scope="session")
def synthetic_db(tmp_path_factory):
    """A warehouse holding the synthetic tree (seed 0, 14 models); returns its path."""
    tmp = tmp_path_factory.mktemp("synthetic_wh")
    generate_tree(tmp / "tree", n_models=14, seed=0)
    db = tmp / "pace.duckdb"
    con = connect(db)
    ingest_tree(con, tmp / "tree", tmp / "lake")
    con.close()
    return db
