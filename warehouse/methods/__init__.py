"""The methods: one object each (its options, ``evaluate``, ``fit``), and the one registry.

A new method is one module with a :class:`~warehouse.methods.base.Method` subclass and one line in
``REGISTRY``: the command line, the API, ``pace loocv`` and ``pace fit`` find it there.
"""
from __future__ import annotations

from warehouse.errors import UserError
from warehouse.methods.anchors import Anchors
from warehouse.methods.base import Method
from warehouse.methods.baselines import BenchRidge, Mean, RandomC
from warehouse.methods.compat import Compat
from warehouse.methods.default import Default
from warehouse.methods.instance import Instance
from warehouse.methods.options import CATALOGUE, Option

#: --method name -> the method
REGISTRY: dict[str, Method] = {m.name: m for m in (Default(), Instance(), Compat(), Anchors(), Mean(), RandomC(),
                                                    BenchRidge())}


def get(name: str, task: str | None = None) -> Method:
    """The method called ``name`` (offering ``task``), or a UserError listing the choices."""
    choices = names(task)
    if name not in choices:
        raise UserError(f"--method {name!r} is not one of: {', '.join(choices)}")
    return REGISTRY[name]


def names(task: str | None = None, *, fit: bool = False) -> list[str]:
    """The methods offering ``task`` (any task when None; with ``fit``, a stored fit of it), in registry order."""
    return [n for n, m in REGISTRY.items()
            if (m.fit_reads if fit else m.reads) and (task is None or task in (m.fit_reads if fit else m.reads))]


def options(task: str | None = None, *, fit: bool = False) -> list[Option]:
    """Every option some method reads for ``task`` (``pace loocv`` / with ``fit``, ``pace fit``): the flags
    of those commands, in catalogue order, then the methods' own."""
    read = {name for m in REGISTRY.values() for t, names_ in (m.fit_reads if fit else m.reads).items()
            if task is None or t == task for name in names_}
    declared = {o.name: o for m in REGISTRY.values() for o in m.declared()}
    return [declared[name] for name in dict.fromkeys([*CATALOGUE, *declared]) if name in read]


__all__ = ["CATALOGUE", "REGISTRY", "Method", "get", "names", "options"]
