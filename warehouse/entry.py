"""The `pace` executable: chooses BLAS kernels before numpy loads, then runs the CLI.

``compat`` reproduces the published outputs only with the OpenBLAS kernels of the machine that made
them (AVX2 "Haswell"): the published method lets floating-point noise break exact ties (spec §18.21,
§18.23). Those kernels must be chosen before numpy is first imported, so this module does it for
commands that run ``compat`` (an explicit ``OPENBLAS_CORETYPE`` is always respected).
"""
from __future__ import annotations

import os
import platform
import sys

#: the same as models.compat.goal_a.COMPAT_NUMERICS_ENV (importing that module would load numpy too early)
COMPAT_NUMERICS_ENV = {"OPENBLAS_CORETYPE": "Haswell"}


def _wants_compat(argv: list[str]) -> bool:
    return "compat" in " ".join(argv) or (len(argv) > 1 and argv[1] == "demo")


def main() -> None:
    if _wants_compat(sys.argv) and platform.machine() in ("x86_64", "AMD64") \
            and "OPENBLAS_CORETYPE" not in os.environ:
        os.environ.update(COMPAT_NUMERICS_ENV)
    from warehouse.cli import main as cli_main

    cli_main()
