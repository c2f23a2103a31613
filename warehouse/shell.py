"""A small SQL prompt on a warehouse connection (every view and macro available)."""
from __future__ import annotations

import duckdb

from warehouse.output import console, err_console, print_rows
from warehouse.sqlguard import before_write, explain, run as run_sql


def run_shell(con: duckdb.DuckDBPyConnection, stdin=None, *, write: bool = False) -> int:
    """Read statements until .quit / EOF and run them on ``con`` (opened by the caller: sandboxed, and
    read-only unless ``write``). Returns how many statements failed or were refused."""
    try:
        import readline  # noqa: F401  (line editing and history where available)
    except ImportError:
        pass
    console.print("pace shell: SQL statements end with ';'. Tables: scores, score_files, benchmarks, "
                  "model_aliases; views: models, target_means, coverage, instance_stats, ... .quit to leave."
                  + ("" if write else " Read-only (pace shell --write to change data)."),
                  highlight=False)
    buffer: list[str] = []
    failed = 0
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
            if write:
                before_write(con, statement)        # recomputed when the shell ends (sqlguard.after_write)
            rel = run_sql(con, statement)
            result = None if rel is None else (rel.columns, rel.fetchall())
        except duckdb.Error as exc:
            failed += 1
            err_console.print(f"error: {explain(exc, write=write)}", highlight=False, markup=False, style="red",
                              soft_wrap=True)
            continue
        if result is not None:
            print_rows(*result, max_rows=100)
    return failed
