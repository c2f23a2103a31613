"""The warehouse's matrices equal the published loader's (test oracle) on the real data."""
from __future__ import annotations

import numpy as np
import pytest

from ingest.load import ingest_tree
from tests.support.published_loader import load_published
from warehouse.connect import connect
from warehouse.matrices import build_matrices, published_arrays


@pytest.mark.parametrize("sources", [["mmmu", "visualpuzzles"], None])
def test_matrices_equal_published_loader(real_tree, tmp_path, sources):
    con = connect(tmp_path / "p.duckdb")
    ingest_tree(con, real_tree, tmp_path / "lake")
    m = build_matrices(con, sources=sources)
    X, kept, P, Y = published_arrays(m.X, m.P)
    ref = load_published(base=real_tree, sources=sources)
    assert m.models == list(ref.models)
    assert [m.columns[k] for k in kept] == [tuple(c) for c in ref.col_meta]
    assert np.array_equal(X, ref.X)
    for t, target in enumerate(ref.targets):
        assert np.array_equal(P[t], ref.P[target])
    assert np.abs(Y - ref.Y).max() < 1e-6
