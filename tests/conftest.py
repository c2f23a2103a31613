"""Shared fixtures: the real published scores (optional) and small hand-made trees."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_csv

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL_TREE = SHARED / "pace-results" / "standardized_results"
REFERENCE = SHARED / "reference"


@pytest.fixture(scope="session")
def real_tree() -> Path:
    if not REAL_TREE.is_dir():
        pytest.skip(f"real data absent: {REAL_TREE.relative_to(REPO.parent)} not found beside the repo")
    return REAL_TREE


@pytest.fixture
def small_tree(tmp_path: Path) -> Path:
    """Two models, one source benchmark with two leaves, one target."""
    root = tmp_path / "tree"
    for model, a, b in (("M1", "1.0", "0.0"), ("M2", "0.0", "1.0")):
        write_csv(root / "src" / "leaf_a" / f"{model}.csv", f"id,score,metric_name\nx1,{a},acc\nx2,{b},acc\n")
        write_csv(root / "src" / "leaf_b" / f"{model}.csv", f"id,score,metric_name\ny1,{b},acc\ny2,0.5,acc\n")
        write_csv(root / "gaia" / f"{model}.csv", f"id,score,metric_name\ng1,{a},acc\ng2,1.0,acc\n")
    return root
