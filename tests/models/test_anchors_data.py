"""bench/anchors_data.py, the stop-gap reader of the OpenHands Index layout (until `pace import
openhands-index`): which run is the truth, what a null means, the name map, a second spelling skipped."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import write_csv

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))   # after the repo: bench/ingest.py is a script
from anchors_data import load_targets  # noqa: E402


def _openhands(root: Path, model: str, bench: str, rows: dict, meta: dict | None = None):
    folder = root / "openhands-index" / "results" / model
    (folder / "instance_results").mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps(meta or {"release_date": "2026-01-01"}))
    if rows:
        (folder / "instance_results" / f"{bench}.json").write_text(json.dumps(rows))


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    _openhands(tmp_path, "claude-opus-4-5", "swe-bench",
               {"a": {"resolved": True, "cost": 1.0}, "b": {"resolved": False, "cost": None},
                "c": {"resolved": None, "cost": 2.0}})
    _openhands(tmp_path, "NewModel", "swe-bench", {"a": {"resolved": False, "cost": 0.5},
                                                   "b": {"resolved": True, "cost": 0.7}})
    _openhands(tmp_path, "Minimax-2.7", "swe-bench", {})               # metadata only: a second spelling
    write_csv(tmp_path / "pace-results" / "standardized_results" / "swebench" / "Claude-4.5-Opus.csv",
              "id,score,metric_name\na,0.0,resolved\nb,1.0,resolved\n")
    write_csv(tmp_path / "pace-results" / "standardized_results" / "swebench" / "Kimi-K2.csv",
              "id,score,metric_name\na,1.0,resolved\n")
    for target in ("gaia", "swebench_multimodal", "swtbench"):
        (tmp_path / "pace-results" / "standardized_results" / target).mkdir(parents=True, exist_ok=True)
    return tmp_path


def test_pace_files_are_the_truth_of_the_pace_models_and_costs_come_from_openhands(shared):
    data = load_targets(shared)
    tr = data.targets["swebench"]
    assert tr.models == ["Claude-4.5-Opus", "Kimi-K2", "NewModel"]          # the README's name map applied
    assert "Minimax-2.7" not in data.metadata
    row = tr.models.index("Claude-4.5-Opus")
    col = {i: k for k, i in enumerate(tr.instances)}
    assert tr.y[row, col["a"]] == 0.0 and tr.y[row, col["b"]] == 1.0      # the Pace file, not the OH run
    assert "c" not in col                         # in no truth: the Pace file lacks it, the OH run is not used
    assert tr.cost[row, col["a"]] == 1.0 and np.isnan(tr.cost[row, col["b"]])   # null cost stays unknown
    assert tr.truth_source["Claude-4.5-Opus"] == "pace" and tr.truth_source["NewModel"] == "openhands"
    assert data.pace_models == ["Claude-4.5-Opus", "Kimi-K2"]


def test_openhands_runs_when_preferred_and_a_null_result_is_missing_not_failed(shared):
    tr = load_targets(shared, prefer="openhands").targets["swebench"]
    row = tr.models.index("Claude-4.5-Opus")
    col = {i: k for k, i in enumerate(tr.instances)}
    assert tr.y[row, col["a"]] == 1.0 and tr.y[row, col["b"]] == 0.0
    assert "c" not in col                                                 # resolved: null is no result
    assert tr.truth_source["Kimi-K2"] == "pace"                           # only there
    with pytest.raises(ValueError, match="prefer"):
        load_targets(shared, prefer="both")
