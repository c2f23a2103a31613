"""The README's walkthroughs run as written: the Python API example and the step-by-step shell session
from a new model to its prediction, each on a SYNTHETIC tree in a fresh folder (read from README.md
itself, so an edit that breaks them fails here)."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.synthetic import generate_tree

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")


def _block(heading: str, language: str) -> str:
    """The first ``language`` code block after ``heading``."""
    section = README[README.index(heading):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def test_python_api_example(tmp_path):
    """`NewModel` as the README describes it: source results in the tree, no agentic scores."""
    tree = tmp_path / "results" / "standardized_results"
    summary = generate_tree(tree, n_models=7, seed=3, scale=0.1)
    new = summary.models[-1]
    for path in sorted(tree.rglob(f"{new}.csv")):
        if path.relative_to(tree).parts[0] in TARGETS:
            path.unlink()
        else:
            path.rename(path.with_name("NewModel.csv"))
    code = _block("## Python API", "python")
    assert 'wh.predict("NewModel")' in code
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    predicted = duckdb.connect().execute(
        f"SELECT target, predicted FROM '{tmp_path / 'export' / 'predictions.parquet'}' WHERE model = 'NewModel'"
    ).fetchall()
    assert sorted(t for t, _ in predicted) == sorted(TARGETS) and all(0 <= p <= 1 for _, p in predicted)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_new_model_walkthrough(tmp_path):
    """The shell session, in a folder holding the project's environment and its tests (as a checkout
    does), on a free port instead of 8765; the scripted endpoint it starts is stopped at the end."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip(f"the tests do not run in a virtual environment ({venv} has no bin/activate)")
    script = _block("### From a new model to a prediction, step by step", "sh")
    assert script.count("8765") == 2 and script.startswith(". .venv/bin/activate")
    (tmp_path / ".venv").symlink_to(venv)
    (tmp_path / "tests").symlink_to(REPO / "tests")
    session = ("set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
               + script.replace("8765", str(_free_port())) + "pace predict NewModel --json > prediction.json\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"}
    r = subprocess.run(["bash", "-c", session], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
    assert ": done; " in r.stdout and "error" not in r.stderr.lower()
    rows = json.loads((tmp_path / "prediction.json").read_text())["predictions"]
    assert sorted(p["target"] for p in rows) == sorted(TARGETS)
    assert all(p["coverage"] == 1.0 for p in rows)                      # "coverage 100%"
