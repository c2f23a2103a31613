"""ingest.tolerance.same_number: the drift checks' comparison of a stored number with its recomputed one."""
from __future__ import annotations

import duckdb
import pytest

from ingest.tolerance import same_number

NAN, INF = "'NaN'::DOUBLE", "'inf'::DOUBLE"


@pytest.mark.parametrize("a, b, same", [
    ("NULL::DOUBLE", "NULL::DOUBLE", True), (NAN, NAN, True), (INF, INF, True), ("0.5", "0.5 + 1e-12", True),
    ("0.5", "0.5 + 1e-6", False), ("0.5", "NULL::DOUBLE", False), ("NULL::DOUBLE", NAN, False), (NAN, "0.5", False),
    (INF, "-" + INF, False), (INF, "1e308", False),
])
def test_same_number(a, b, same):
    assert duckdb.connect().execute(f"SELECT {same_number(a, b, 1e-9)}").fetchall() == [(same,)]
