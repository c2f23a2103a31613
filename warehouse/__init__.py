"""The Pace warehouse: ``from warehouse import Warehouse`` (see :mod:`warehouse.api`).

The name is resolved on first use, so ``import warehouse.cli`` (the ``pace`` command) does not load
numpy and the kernels before it has chosen their BLAS settings (``warehouse.entry``).
"""
from __future__ import annotations

__all__ = ["Warehouse", "UserError"]


def __getattr__(name: str):
    if name == "Warehouse":
        from warehouse.api import Warehouse

        return Warehouse
    if name == "UserError":
        from warehouse.errors import UserError

        return UserError
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
