"""The options a method may read: one declaration each (name, type, default, bounds, help).

A declaration is the single source of the option's command-line flag (``--nc-h``), its environment
variable (``PACE_NC_H``), the check of its value and its default. Each method says which options it
reads (``Method.reads``); an option given to a method that does not read it is refused, naming both
(:func:`warehouse.methods.base.Method.refuse_unread`). A method may declare options of its own
(``Method.own_options``), which join the command line the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from warehouse import validate


@dataclass(frozen=True)
class Option:
    """One option: ``kind`` is int, float, bool or str; ``lo`` / ``hi`` bound a number (inclusive),
    ``choices`` a string. ``default`` None means "not set" (the method chooses, e.g. tunes it)."""

    name: str
    kind: type
    default: Any
    help: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    flag_name: str | None = None      # the flag when it is not --<name with dashes> (e.g. --B)
    env_name: str | None = None       # the variable when it is not PACE_<NAME> (one another command already reads)

    @property
    def flag(self) -> str:
        return self.flag_name or "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return self.env_name or "PACE_" + self.name.upper()

    def check(self, value: Any) -> Any:
        """The value, or a UserError naming the flag, the value and what is allowed (None passes)."""
        if value is None:
            return None
        if self.choices is not None:
            return validate.choice(value, self.flag, self.choices)
        if self.kind is int:
            return validate.integer(value, self.flag, None if self.lo is None else int(self.lo),
                                    None if self.hi is None else int(self.hi))
        if self.kind is float:
            return validate.number(value, self.flag, self.lo, self.hi)
        return value


#: the options several methods share (a method's own ones live in its module)
CATALOGUE: dict[str, Option] = {o.name: o for o in (
    Option("count", int, 100, "Instance budget C per target.", lo=1),
    Option("B", int, 300, "Bootstrap replicates of the target instances.", lo=1, flag_name="--B"),
    Option("seed", int, 42, "Base random seed.", lo=0, hi=2**32 - 1),
    Option("auto_tune", bool, False, "Tune the configuration per target (compat: on the evaluation "
                                     "predictions, as published)."),
    Option("strict_budget", bool, False, "Joint budget |H ∪ D| = C."),
    Option("pin_task_a_selection", bool, False, "Reuse Goal A's selected instances (required by compat's "
                                                "strict path)."),
    Option("fit_all", bool, False, "In-sample fit on all models (like the published fit-abs; analysis only, "
                                   "not out-of-sample)."),
    Option("missing", str, "mask", "Missing source scores: mask them, treat them as 0 (as compat), or auto: "
                                   "choose per fold by inner LOOCV.", choices=("mask", "zero", "auto")),
    Option("q", float, None, "Share of the budget for Local (H) selection.", lo=0, hi=1),
    Option("m", float, None, "Mixing weight of the Local (H) side.", lo=0, hi=1),
    Option("nc_h", int, None, "Rank of the Local embedding.", lo=1),
    Option("nc_d", int, None, "Rank of the Global embedding.", lo=1),
    Option("nc_max", int, 10, "Upper end of the nc grids (auto-tune).", lo=1),
)}


class Options(Mapping[str, Any]):
    """The values a run uses: every declared option, the given value or else its default; read as
    ``opts.count`` or ``opts["count"]``."""

    def __init__(self, declared: Iterable[Option], given: Mapping[str, Any] | None = None):
        given = given or {}
        unknown = sorted(set(given) - {o.name for o in declared})
        if unknown:
            raise TypeError(f"unknown options: {', '.join(unknown)}")
        self._values = {o.name: o.default if given.get(o.name) is None else given[o.name] for o in declared}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({self._values!r})"
