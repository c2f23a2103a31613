"""Checks of user input, shared by every command: each raises :class:`UserError` with one line that
names the flag, the bad value and what is allowed, before any work is done or anything written."""
from __future__ import annotations

import math
import re
from datetime import date
from typing import Iterable, Optional, Sequence

import duckdb

from warehouse.errors import UserError

ROLES = ("target", "source", "excluded")


def _short(names: Sequence[str], limit: int = 12) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "") \
        if names else "none"


def model_name(value: Optional[str], what: str = "MODEL") -> str:
    """A model name as typed: surrounding whitespace removed; empty or control characters refused."""
    name = (value or "").strip()
    if not name:
        raise UserError(f"{what} must be a non-empty model name, not {value!r}")
    if any(ord(c) < 32 for c in name):
        raise UserError(f"{what} {value!r} contains a control character")
    return name


def file_model_name(value: Optional[str], what: str = "MODEL") -> str:
    """A model name that a score file can carry (``<name>.csv`` in a results tree), as ``pace alias add``
    requires of both its names: :func:`model_name`, and no path separator, not ``.`` or ``..``, no
    leading dot (ingest skips hidden files)."""
    name = model_name(value, what)
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise UserError(f"{what} {value!r} is not a model name: a model name is a file name without "
                        "'/', '\\' or a leading '.'")
    return name


def split_list(values: Optional[Iterable[str]]) -> Optional[list[str]]:
    """``--opt a,b --opt c`` -> ['a', 'b', 'c'] (trimmed, empty items dropped); None when not given."""
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    if not out:
        raise UserError(f"empty list: {list(values)!r}")
    return list(dict.fromkeys(out))


def choice(value: str, flag: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise UserError(f"{flag} {value!r} is not one of: {', '.join(allowed)}")
    return value


def split_name(value: str) -> str:
    """--split: loo, family, low-K or high-K with K a positive integer."""
    if not re.match(r"^(loo|family|(low|high)-[1-9][0-9]*)$", value or ""):
        raise UserError(f"--split {value!r} is not one of: loo, family, low-K, high-K (K a positive integer, "
                        "e.g. low-3)")
    return value


def integer(value: int, flag: str, minimum: int | None = 1, maximum: int | None = None) -> int:
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = (f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}") \
            if minimum is not None else f"<= {maximum}"
        raise UserError(f"{flag} must be an integer {bounds}, not {value}")
    return value


def number(value: Optional[float], flag: str, lo: float, hi: float, *, lo_open: bool = False,
           hi_open: bool = False) -> Optional[float]:
    """A float in [lo, hi] (``lo_open`` / ``hi_open`` exclude the ends); None passes."""
    if value is None:
        return None
    ok = math.isfinite(value) and (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if not ok:
        raise UserError(f"{flag} must be in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}, "
                        f"not {value:g}")
    return value


def iso_date(value, flag: str) -> date:
    """A calendar date given as ``YYYY-MM-DD`` (or a ``date``); anything else is refused, naming it."""
    if isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise UserError(f"{flag} {text!r} is not a date (YYYY-MM-DD, e.g. 2024-05-13)") from None


def integer_list(text: str, flag: str, minimum: int = 1) -> list[int]:
    """'25,50,100' -> [25, 50, 100]; anything else is refused."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UserError(f"{flag} needs comma-separated integers, got {text!r}")
    out = []
    for item in items:
        try:
            out.append(int(item))
        except ValueError:
            raise UserError(f"{flag}: {item!r} is not an integer (expected e.g. 25,50,100)") from None
        integer(out[-1], flag, minimum)
    return out


def benchmarks(con: duckdb.DuckDBPyConnection, names: Optional[list[str]], flag: str,
               role: str) -> Optional[list[str]]:
    """Each name must be a benchmark of ``role`` with rows in the warehouse; None (all) passes."""
    if names is None:
        return None
    rows = dict(con.execute("""
        SELECT b.benchmark, b.role FROM benchmarks b
        WHERE EXISTS (SELECT 1 FROM scores s WHERE s.benchmark = b.benchmark)""").fetchall())
    allowed = sorted(b for b, r in rows.items() if r == role)
    for name in names:
        if name not in rows:
            raise UserError(f"{flag}: no benchmark {name!r} in the warehouse; {role}s: {_short(allowed)}")
        if rows[name] != role:
            raise UserError(f"{flag}: {name!r} is a {rows[name]} benchmark, not a {role}; "
                            f"{role}s: {_short(allowed)} (change roles with `pace benchmarks set`)")
    return names


def known_benchmark(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """A benchmark the warehouse knows (a role row or score rows)."""
    name = name.strip()
    known = [b for (b,) in con.execute("""SELECT benchmark FROM benchmarks UNION SELECT DISTINCT benchmark
                                          FROM scores ORDER BY 1""").fetchall()]
    if name not in known:
        raise UserError(f"no benchmark {name!r} in the warehouse; known: {_short(known)}")
    return name


def models_in_warehouse(con: duckdb.DuckDBPyConnection, names: Optional[list[str]], flag: str) -> Optional[list[str]]:
    if not names:
        return names
    known = [m for (m,) in con.execute("SELECT model FROM models WHERE known ORDER BY model").fetchall()]
    for name in names:
        model_name(name, flag)
        if name not in known:
            raise UserError(f"{flag}: no model {name!r} with source rows in the warehouse; known: {_short(known)}")
    return names
