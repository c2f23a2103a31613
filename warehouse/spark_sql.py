"""The user-facing views in Spark SQL, transpiled by sqlglot from the DuckDB SQL in ``sql/``.

``pace export`` writes ``spark/views.sql``: it registers the exported Parquet as temporary views
(``scores/`` with its hive partitions, every other table from its file) and creates every user view
over them, so another team can run the same views on Spark. Nothing is edited by hand after
sqlglot: where sqlglot cannot say a view's meaning in Spark SQL, the view's own SQL is changed
(for example ``current_fits`` avoids ``QUALIFY``, which sqlglot rewrites with a helper column that
would leak into ``SELECT *``). :func:`to_spark` refuses any output that introduces such a helper
name, so a new view that needs the same treatment fails loudly, here and in the tests.

The formulas the views share are DuckDB scalar macros (``CREATE MACRO pace_expit(z) AS ...``, stored in
the warehouse file, so any DuckDB client has them); Spark has no such macros, so :func:`to_spark` writes
each call out as the macro's body (:func:`expand_macros`): the formula is still written once, in ``sql/``.
"""
from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from warehouse.connect import sql_files

READ, WRITE = "duckdb", "spark"
EXPORT_VARIABLE = "pace_export"          # ${pace_export}: the export folder, set by the caller
_VIEW = re.compile(r"^CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\b", re.I | re.M)
_SCALAR_MACRO = re.compile(r"^CREATE\s+OR\s+REPLACE\s+MACRO\s+(\w+)\s*\(([^)]*)\)\s+AS\s+(?!TABLE\b)(.*?);?\s*\Z",
                           re.I | re.S | re.M)
# names sqlglot makes up when it rewrites a construct (QUALIFY -> _w, subqueries -> _t / _q / _u ...)
_HELPER = re.compile(r"(?<![\w.`'])_[a-z](?:_\d+)?\b")


class NotTranspilable(ValueError):
    """sqlglot cannot express this view in Spark SQL without changing its meaning."""


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")).strip()


def view_sources() -> dict[str, str]:
    """view name -> its ``CREATE OR REPLACE VIEW`` statement from ``sql/`` (comments removed)."""
    out: dict[str, str] = {}
    for path in sql_files():
        text = path.read_text(encoding="utf-8")
        m = _VIEW.search(text)
        if m:
            out[m.group(1)] = _strip_comments(text).rstrip(";").strip()
    return out


@lru_cache(maxsize=1)
def scalar_macros() -> dict[str, tuple[tuple[str, ...], exp.Expression]]:
    """macro name -> (its parameters, its body) of every scalar macro in ``sql/``."""
    out = {}
    for path in sql_files():
        m = _SCALAR_MACRO.search(_strip_comments(path.read_text(encoding="utf-8")))
        if m:
            params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
            out[m.group(1).lower()] = (params, sqlglot.parse_one(m.group(3), read=READ))
    return out


def expand_macros(tree: exp.Expression) -> exp.Expression:
    """``tree`` with every call of a ``sql/`` scalar macro replaced by the parenthesised macro body (its
    parameters replaced by the parenthesised arguments), calls inside the arguments or the bodies included.
    The body keeps its parentheses: ``y * anchor_log_p(z, s)`` must not become ``y * ln(1 - s) + ...``."""
    macros = scalar_macros()

    def call(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Anonymous) or node.name.lower() not in macros:
            return node
        params, body = macros[node.name.lower()]
        if len(params) != len(node.expressions):
            raise NotTranspilable(f"{node.name}() takes {len(params)} arguments, not {len(node.expressions)}")
        args = dict(zip(params, node.expressions))
        return exp.Paren(this=body.copy().transform(lambda n: exp.Paren(this=args[n.name].copy())
                                                    if isinstance(n, exp.Column) and not n.table and n.name in args
                                                    else n))

    while any(isinstance(n, exp.Anonymous) and n.name.lower() in macros for n in tree.walk()):
        tree = tree.transform(call)
    return tree


def to_spark(name: str, sources: dict[str, str] | None = None) -> str:
    """The view ``name`` as a Spark ``CREATE OR REPLACE TEMPORARY VIEW`` statement."""
    sources = view_sources() if sources is None else sources
    if name not in sources:
        raise NotTranspilable(f"no view {name!r} in sql/")
    original = sources[name]
    try:
        out = expand_macros(sqlglot.parse_one(original, read=READ)).sql(
            dialect=WRITE, pretty=True, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        raise NotTranspilable(f"{name}: sqlglot cannot write it for Spark: {str(exc).splitlines()[0]}") from None
    made_up = sorted(set(_HELPER.findall(out)) - set(_HELPER.findall(original)))
    if made_up:
        raise NotTranspilable(f"{name}: sqlglot rewrote it with helper name(s) {', '.join(made_up)}, which can "
                              "leak into the result (e.g. SELECT * after QUALIFY): rewrite the view in plain SQL")
    out, n = re.subn(r"^CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMPORARY VIEW", out, count=1)
    if not n:
        raise NotTranspilable(f"{name}: unexpected sqlglot output: {out[:60]!r}")
    return out


def registration(name: str, partitioned: bool = False) -> str:
    """A temporary view over an exported table: ``<name>.parquet``, or the hive-partitioned folder."""
    location = f"${{{EXPORT_VARIABLE}}}/{name}" + ("" if partitioned else ".parquet")
    return f"CREATE OR REPLACE TEMPORARY VIEW {name} USING parquet OPTIONS (path '{location}')"


def spark_script(views: list[str], tables: list[str], partitioned: tuple[str, ...] = ("scores",),
                 not_for_spark: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The whole ``spark/views.sql`` (settings, table registrations, then the views in ``sql/`` order)
    and the views left out of it with the reason: those in ``not_for_spark``, and any sqlglot cannot
    write faithfully (none, as long as the tests pass)."""
    sources = view_sources()
    left_out = dict(not_for_spark or {})
    order = [v for v in sources if v in views and v not in left_out]
    left_out.update({v: "no such view in sql/" for v in views if v not in sources})
    head = [
        "-- Pace Warehouse views in Spark SQL (transpiled by sqlglot from the warehouse's sql/ files).",
        f"-- Set {EXPORT_VARIABLE} to this export's folder, then run every statement, e.g.",
        f"--   spark-sql -d {EXPORT_VARIABLE}=/path/to/export -i spark/views.sql -e 'SELECT * FROM predictions'",
        f"--   or in PySpark: spark.conf.set('{EXPORT_VARIABLE}', path), then spark.sql() each statement",
        "--   of this file (each ends with ';' at the end of a line: split on ';\\n').",
        "-- Partition values stay strings (a benchmark named 2024 is not a number). Views keep their analysed",
        "-- plans: otherwise Spark analyses a view again wherever another view reads it, and the deep ones",
        "-- (predictions, anchor_estimates) take about 3x as long to define and to query.",
    ]
    statements = ["SET spark.sql.sources.partitionColumnTypeInference.enabled=false",
                  "SET spark.sql.legacy.storeAnalyzedPlanForView=true"]
    statements += [registration(t, t in partitioned) for t in list(partitioned) + [t for t in tables
                                                                                 if t not in partitioned]]
    for view in order:
        try:
            statements.append(to_spark(view, sources))
        except NotTranspilable as exc:
            left_out[view] = str(exc)
    head += [f"-- {view}: not written for Spark: {why}" for view, why in left_out.items()]
    return "\n".join(head) + "\n" + "".join(s + ";\n\n" for s in statements), left_out


def split_statements(script: str) -> list[str]:
    """The statements of a script written by :func:`spark_script`, split as its header tells users to."""
    return [p for p in script.split(";\n") if p.strip()]
