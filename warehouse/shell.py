"""A small SQL prompt on a warehouse connection (every view and macro available)."""
from __future__ import annotations

import duckdb

from warehouse.errors import UserError
from warehouse.output import console, print_rows
from warehouse.sqlguard import before_write, check_statements


def run_shell(con: duckdb.DuckDBPyConnection, stdin=None, *, write: bool = False) -> None:
    """Read statements until .quit / EOF. Without ``write`` only reading statements run."""
    try:
        import readline  # noqa: F401  (line editing and history where available)
    except ImportError:
        pass
    console.print("pace shell: SQL statements end with ';'. Tables: scores, score_files, benchmarks, "
                  "model_aliases; views: models, target_means, coverage, instance_stats, ... .quit to leave."
                  + ("" if write else " Read-only (pace shell --write to change data)."),
                  highlight=False)
    buffer: list[str] = []
    while True:
        try:
            line = input("pace> " if not buffer else "  ..> ") if stdin is None else stdin.readline()
        except EOFError:
            break
        if stdin is not None and line == "":
            break
        line = line.rstrip("\n")
        if not buffer and line.strip() in (".quit", ".exit", "\\q"):
            break
        if not buffer and line.strip() == ".tables":
            line = "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1;"
        buffer.append(line)
        if not line.rstrip().endswith(";"):
            continue
        statement, buffer = "\n".join(buffer), []
        try:
            check_statements(con, statement, write=write)
            if write:
                before_write(con, statement)        # recomputed when the shell ends (sqlguard.after_write)
            rel = con.sql(statement)
        except (duckdb.Error, UserError) as exc:
            console.print(f"error: {exc}", highlight=False, markup=False, style="red")
            continue
        if rel is not None:
            print_rows(rel.columns, rel.fetchall(), max_rows=100)
