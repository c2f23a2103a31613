"""Printing results: a rich table for people, JSON for machines (``--json``), and for ad-hoc SQL
(:func:`print_result`) also one record per row, CSV or Markdown."""
from __future__ import annotations

import csv
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


#: how `pace sql` prints a result (``--format``, ``PACE_SQL_FORMAT``); ``table`` becomes ``line``
#: records when the table would not fit the terminal (rich would squeeze every column to nothing)
SQL_FORMATS = ("table", "line", "csv", "json", "markdown")


def table_width(columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4) -> int:
    """Characters a table of ``rows`` needs with no cell cut (rich's borders: 3 per column and 1)."""
    widths = [len(c) for c in columns]
    for r in rows:
        for i, v in enumerate(r):
            widths[i] = max(widths[i], max((len(line) for line in _cell(v, digits).splitlines()), default=0))
    return sum(widths) + 3 * len(widths) + 1


def print_result(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", *,
                 max_rows: int | None = None, digits: int = 4) -> None:
    """Print a query result in ``fmt`` (one of :data:`SQL_FORMATS`). ``max_rows`` limits what people
    read (table, line, markdown; a note says how many more); csv and json hold every row, full precision."""
    if fmt == "json":
        emit_json([dict(zip(columns, r)) for r in rows])
        return
    if fmt == "csv":
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow(columns)
        out.writerows([_csv_cell(v) for v in r] for r in rows)
        return
    shown = rows if max_rows is None else rows[:max_rows]
    if fmt == "table":
        width = console.width
        if table_width(columns, shown, digits) <= width:
            print_rows(columns, shown, digits=digits)
        else:
            err_console.print(f"({len(columns)} columns do not fit in {width} characters: one record per row; "
                              "--format csv, json or markdown for other layouts)", highlight=False, soft_wrap=True)
            fmt = "line"
    if fmt == "line":
        label = max((len(c) for c in columns), default=0)
        records = []
        for r in shown:
            lines = []
            for c, v in zip(columns, r):
                text = _cell(v, digits).replace("\n", "\n" + " " * (label + 3))
                lines.append(f"{c.rjust(label)} = {text}")
            records.append("\n".join(lines))
        sys.stdout.write("\n\n".join(records) + ("\n" if records else ""))
    elif fmt == "markdown":
        def md(text):
            return text.replace("|", "\\|").replace("\n", " ")
        sys.stdout.write("| " + " | ".join(md(c) for c in columns) + " |\n")
        sys.stdout.write("|" + "|".join("---" for _ in columns) + "|\n")
        for r in shown:
            sys.stdout.write("| " + " | ".join(md(_cell(v, digits)) for v in r) + " |\n")
    if len(shown) < len(rows):
        err_console.print(f"... {len(rows) - len(shown)} more rows (--max-rows, a LIMIT, or --format csv/json)",
                          highlight=False, soft_wrap=True)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(_plain(value))
    plain = _plain(value)
    return "" if plain is None else plain
