"""Printing results: a rich table for people, JSON for machines (``--json``)."""
from __future__ import annotations

import datetime as _dt
import decimal
import json
import math
import sys
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(_plain(payload), indent=2) + "\n")


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else "nan"
    return str(value)


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None,
               as_json: bool = False, digits: int = 4, max_rows: int | None = None) -> None:
    if as_json:
        emit_json([dict(zip(columns, r)) for r in rows])
        return
    table = Table(title=title, show_lines=False, header_style="bold")
    for c in columns:
        table.add_column(c)
    shown = rows if max_rows is None else rows[:max_rows]
    for r in shown:
        table.add_row(*(_cell(v, digits) for v in r))
    console.print(table)
    if max_rows is not None and len(rows) > max_rows:
        console.print(f"... {len(rows) - max_rows} more rows (use --json or a LIMIT)")
