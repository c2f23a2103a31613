"""Run a reference-comparison module in a subprocess with the reference machine's BLAS kernels.

The kernels must be chosen before numpy loads, hence a fresh interpreter (see
``models.compat.goal_a.COMPAT_NUMERICS_ENV``). The module prints one JSON document on stdout.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_in_compat_numerics(module: str, args: list[str], timeout: int) -> dict:
    from models.compat.goal_a import COMPAT_NUMERICS_ENV

    env = dict(os.environ)
    env.update(COMPAT_NUMERICS_ENV)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)
