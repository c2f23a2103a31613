"""Per-target configurations and the published frozen tables (spec §11, §16).

* ``AbsConfig`` — Goal A: prediction = m·H(nc_h) + (1 − m)·D-pt(nc_d), q = H share of the budget.
* ``PairConfig`` — compat Goal B: margin = m·H(nc_h) + (1 − m)·D-pt(nc_d), regressor 'logit'/'ols'.
* ``DefaultPairConfig`` — default Goal B: one rank nc for both sides.

``frozen_abs_configs`` / ``frozen_pair_configs`` resolve the published tables for a budget C: a
count not in a table uses the nearest one (ties → the smaller count) and says so in a warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple, TypeVar

__all__ = [
    "AbsConfig",
    "TASK_A_CONFIGS",
    "DEFAULT_A_CONFIG",
    "STRICT_DEFAULT_Q",
    "frozen_abs_configs",
    "PairConfig",
    "TASK_B_CONFIGS",
    "TASK_B_CONFIGS_PINNED_A",
    "DEFAULT_B_CONFIG",
    "frozen_pair_configs",
    "DefaultPairConfig",
]


@dataclass(frozen=True)
class AbsConfig:
    """Goal A per-target config: prediction = m·H(nc_h) + (1 − m)·D-pt(nc_d); q = H share."""

    m: float
    nc_h: int
    nc_d: int
    q: Optional[float] = None


@dataclass(frozen=True)
class PairConfig:
    """Goal B per-target config: margin = m·H(nc_h) + (1 − m)·D-pt(nc_d); reg 'logit' or 'ols'."""

    m: float
    nc_h: int
    nc_d: int
    reg: str = "logit"


@dataclass(frozen=True)
class DefaultPairConfig:
    """q: H share of the strict joint budget; nc: embedding rank of both sides; m: H weight."""

    q: float
    nc: int
    m: float


def _a(m, nc_h, nc_d, q=None):
    return AbsConfig(m=m, nc_h=nc_h, nc_d=nc_d, q=q)


def _b(m, nc_h, nc_d, reg="logit"):
    return PairConfig(m=m, nc_h=nc_h, nc_d=nc_d, reg=reg)


#: §16 TASK_A_CONFIGS (count → target → config)
TASK_A_CONFIGS: Dict[int, Dict[str, AbsConfig]] = {
    100: {"gaia": _a(0.2, 1, 5, 0.2), "swebench": _a(0.1, 7, 7, 0.8),
          "swebench_multimodal": _a(0.9, 10, 4, 0.9), "swtbench": _a(0.7, 8, 3, 0.9)},
    150: {"gaia": _a(0.3, 10, 5), "swebench": _a(0.0, 1, 2),
          "swebench_multimodal": _a(0.2, 10, 8), "swtbench": _a(0.9, 6, 3)},
    50: {"gaia": _a(0.5, 2, 5), "swebench": _a(0.7, 1, 2),
         "swebench_multimodal": _a(0.7, 8, 2), "swtbench": _a(0.7, 4, 7)},
}
#: fallback for targets missing from the table (§11)
DEFAULT_A_CONFIG = AbsConfig(m=0.5, nc_h=2, nc_d=7, q=None)
#: q used by the strict paths when a target has none (§4.4)
STRICT_DEFAULT_Q = 0.5

#: §16 TASK_B_CONFIGS (C = 100 only)
TASK_B_CONFIGS: Dict[int, Dict[str, PairConfig]] = {
    100: {"gaia": _b(0.9, 7, 3), "swebench": _b(0.8, 10, 2),
          "swebench_multimodal": _b(0.8, 9, 4), "swtbench": _b(0.7, 5, 10)},
}
#: §16 TASK_B_CONFIGS_PINNED_A
TASK_B_CONFIGS_PINNED_A: Dict[int, Dict[str, PairConfig]] = {
    100: {"gaia": _b(0.7, 3, 7), "swebench": _b(0.9, 1, 10),
          "swebench_multimodal": _b(0.9, 9, 3), "swtbench": _b(0.2, 6, 10)},
    150: {"gaia": _b(0.8, 9, 6), "swebench": _b(0.0, 1, 3),
          "swebench_multimodal": _b(0.9, 10, 9), "swtbench": _b(0.3, 7, 1)},
    50: {"gaia": _b(0.9, 1, 8), "swebench": _b(0.1, 3, 2),
         "swebench_multimodal": _b(0.9, 10, 2), "swtbench": _b(0.9, 6, 3)},
}
#: §11 fallback for targets missing from the Goal B table
DEFAULT_B_CONFIG = PairConfig(m=0.5, nc_h=2, nc_d=6, reg="ols")

_Table = TypeVar("_Table")


def _nearest_table(tables: Mapping[int, _Table], count: int, what: str) -> Tuple[_Table, Optional[str]]:
    """The table of ``count``, else of the nearest count (ties → the smaller) with a warning."""
    if count in tables:
        return tables[count], None
    key = min(tables, key=lambda c: (abs(c - count), c))
    return tables[key], f"no {what} for count={count}; using nearest count {key}"


def frozen_abs_configs(count: int, targets: Sequence[str], q: Optional[float] = None,
                       m: Optional[float] = None, nc_h: Optional[int] = None,
                       nc_d: Optional[int] = None) -> Tuple[Dict[str, AbsConfig], Optional[str]]:
    """Resolve per-target Goal A configs for ``count`` (§11, §16) → (configs, warning or None).

    Overrides m / nc_h / nc_d / q apply to every target (``q`` overrides the table's q, as in
    ``abs``/``fit-abs``).
    """
    table, warn = _nearest_table(TASK_A_CONFIGS, count, "TASK_A_CONFIGS")
    out = {}
    for t in targets:
        c = table.get(t, DEFAULT_A_CONFIG)
        out[t] = AbsConfig(m=c.m if m is None else float(m),
                           nc_h=c.nc_h if nc_h is None else int(nc_h),
                           nc_d=c.nc_d if nc_d is None else int(nc_d),
                           q=c.q if q is None else float(q))
    return out, warn


def frozen_pair_configs(count: int, targets: Sequence[str], pin_a: bool = True,
                        m: Optional[float] = None, nc_h: Optional[int] = None,
                        nc_d: Optional[int] = None) -> Tuple[Dict[str, PairConfig], Optional[str]]:
    """Resolve Goal B configs (§11, §16): the pin-A table or TASK_B_CONFIGS → (configs, warning).

    Overrides apply to every target.
    """
    table, warn = _nearest_table(TASK_B_CONFIGS_PINNED_A if pin_a else TASK_B_CONFIGS, count,
                                 "Goal B configs")
    out = {}
    for t in targets:
        c = table.get(t, DEFAULT_B_CONFIG)
        out[t] = PairConfig(m=c.m if m is None else float(m), nc_h=c.nc_h if nc_h is None else int(nc_h),
                            nc_d=c.nc_d if nc_d is None else int(nc_d), reg=c.reg)
    return out, warn
