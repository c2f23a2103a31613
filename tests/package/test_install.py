"""The project as a user installs it: a wheel (not an editable checkout) in a fresh virtualenv.

The fresh venv gets the test venv's already-installed dependencies through a ``.pth`` line (no
download, no build isolation), but not the project itself: an editable install is activated by
``.pth`` code, which Python runs only for its own site folders, so ``warehouse`` can only come from
the wheel. Then ``pace`` runs ingest -> fit -> predict on synthetic data from a folder outside the
checkout.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def _copy_sources(dest: Path) -> None:
    """What a build reads, and nothing a checkout may hold besides (databases, caches, build/)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    for name in ["sql", *packages]:
        shutil.copytree(REPO / name, dest / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def _run(cmd, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def test_wheel_in_a_fresh_venv_ingests_fits_and_predicts(tmp_path):
    src, wheels, venv, work = tmp_path / "src", tmp_path / "wheels", tmp_path / "venv", tmp_path / "work"
    _copy_sources(src)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("PACE_")}
    env["PACE_DB"] = str(work / "pace.duckdb")
    work.mkdir()

    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
          "--wheel-dir", wheels, src], tmp_path, env)
    (wheel,) = wheels.glob("pace_warehouse-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        tmp_path, env).stdout.strip())
    deps = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (purelib / "test_venv_dependencies.pth").write_text("\n".join(deps) + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet",
          wheel], tmp_path, env)

    where = json.loads(_run([python, "-c", "import json, warehouse.settings as s; "
                             "print(json.dumps([s.__file__, sorted(p.name for p in s.SQL_DIR.glob('*.sql'))]))"],
                            work, env).stdout)
    assert Path(where[0]).is_relative_to(venv), f"warehouse imported from {where[0]}, not the wheel"
    assert where[1] == sorted(p.name for p in (REPO / "sql").glob("*.sql"))

    pace = venv / "bin" / "pace"
    _run([pace, "demo-data", "tree", "--models", "7", "--seed", "3", "--scale", "0.1"], work, env)
    _run([pace, "ingest", "tree", "--no-progress"], work, env)
    tables = json.loads(_run([pace, "sql", "--json", "SELECT count(*) AS n FROM scores"], work, env).stdout)
    assert tables[0]["n"] > 1000
    _run([pace, "fit", "--method", "instance", "--task", "abs", "--sources", "planbench,ifeval", "--count", "10",
          "--B", "5", "--no-intervals", "--exclude", "Vesper-2.5-Flash"], work, env)
    report = json.loads(_run([pace, "predict", "Vesper-2.5-Flash", "--json"], work, env).stdout)
    predicted = {p["target"]: p["predicted"] for p in report["predictions"]}
    assert sorted(predicted) == ["gaia", "swebench", "swebench_multimodal", "swtbench"]
    assert all(0 <= v <= 1 for v in predicted.values())
