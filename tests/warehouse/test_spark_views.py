"""The exported views run on Spark and mean the same there: spark/views.sql (sqlglot's Spark SQL of
every view in warehouse.export.VIEWS) is run by a local SparkSession over the exported Parquet, and
each view's rows are compared with DuckDB's (same rows, numbers within 1e-9).

Needs pyspark (extra `spark`, installed by `make test`) and a Java runtime; skips saying which is
missing. One SparkSession serves every view."""
from __future__ import annotations

import datetime
import decimal
import math
import shutil

import duckdb
import numpy as np
import pytest

from warehouse.connect import sql_files
from warehouse.export import INTERNAL_VIEWS, NOT_FOR_SPARK, VIEWS
from warehouse.spark_sql import NotTranspilable, split_statements, to_spark, view_sources

TOLERANCE = 1e-9
ON_SPARK = [v for v in VIEWS if v not in NOT_FOR_SPARK]


def test_every_view_in_sql_is_listed_once_as_user_facing_or_internal():
    defined = list(view_sources())
    assert sorted(defined) == sorted(VIEWS + INTERNAL_VIEWS), \
        "add the new view to warehouse.export.VIEWS (user-facing) or INTERNAL_VIEWS"
    assert not set(VIEWS) & set(INTERNAL_VIEWS)
    assert len(sql_files()) > len(defined)


def test_views_kept_off_spark_are_user_views_with_a_reason():
    assert set(NOT_FOR_SPARK) <= set(VIEWS) and all(reason.strip() for reason in NOT_FOR_SPARK.values())


@pytest.mark.parametrize("view", ON_SPARK)
def test_every_user_view_transpiles_without_helper_columns(view):
    spark_sql = to_spark(view)
    assert spark_sql.startswith(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS")


def test_a_qualify_rewrite_is_refused_rather_than_exported():
    qualify = {"latest": "CREATE OR REPLACE VIEW latest AS SELECT * FROM proxy_fits "
                         "QUALIFY row_number() OVER (PARTITION BY task ORDER BY created_at DESC) = 1"}
    with pytest.raises(NotTranspilable, match="helper name"):
        to_spark("latest", qualify)


# ------------------------------------------------------------------------------------- on Spark
def _normal(value):
    """A value as both engines' Python rows can be compared: numbers as float, maps as sorted items."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dict):
        return tuple(sorted((k, _normal(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_normal(v) for v in value)
    if hasattr(value, "asDict"):                                     # a Spark Row (struct)
        return tuple(_normal(v) for v in value)
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    return value


def _sort_key(row):
    def one(v):
        if v is None:
            return (0, "")
        if isinstance(v, float):
            return (1, "nan") if math.isnan(v) else (2, round(v, 6))
        if isinstance(v, tuple):
            return (3, tuple(one(x) for x in v))
        return (4, str(v))
    return tuple(one(v) for v in row)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def compare(duck_cols, duck_rows, spark_cols, spark_rows) -> str | None:
    """None when both results hold the same rows (in any order), else what differs."""
    if list(duck_cols) != list(spark_cols):
        return f"columns differ: duckdb {list(duck_cols)}, spark {list(spark_cols)}"
    left = sorted((tuple(_normal(v) for v in r) for r in duck_rows), key=_sort_key)
    right = sorted((tuple(_normal(v) for v in r) for r in spark_rows), key=_sort_key)
    if len(left) != len(right):
        return f"{len(left)} rows in duckdb, {len(right)} on spark"
    for a, b in zip(left, right):
        for col, x, y in zip(duck_cols, a, b):
            if not _same(x, y):
                return f"column {col}: duckdb {x!r}, spark {y!r} (row {a!r})"
    return None


def test_compare_tells_rows_apart():
    assert compare(["a", "b"], [(1, 0.5), (2, None)], ["a", "b"], [(2, None), (1, 0.5 + 1e-12)]) is None
    assert "column b" in compare(["a", "b"], [(1, 0.5)], ["a", "b"], [(1, 0.5001)])
    assert "rows" in compare(["a"], [(1,), (1,)], ["a"], [(1,)])
    assert compare(["m"], [({"x": 1.0, "y": None},)], ["m"], [({"y": None, "x": 1.0},)]) is None


@pytest.fixture(scope="module")
def spark():
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (extra `spark`; `make test` "
                                                    "installs it)")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime on PATH: Spark needs one (Java 17+)")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("pace-views-check")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1").config("spark.default.parallelism", "1")
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.sql.codegen.wholeStage", "false")        # tiny data: compiling costs more than it saves
               .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")  # nor per expression (interpreted)
               .config("spark.sql.legacy.storeAnalyzedPlanForView", "true")
               .config("spark.driver.memory", "1g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    assert pyspark.__version__
    yield session
    session.stop()


def test_every_exported_view_gives_the_same_rows_on_spark(tiny_fitted, spark):
    db, export = tiny_fitted
    spark.conf.set("pace_export", str(export))
    for statement in split_statements((export / "spark" / "views.sql").read_text(encoding="utf-8")):
        spark.sql(statement)                        # exactly the file a Spark user runs
    con = duckdb.connect(str(db), read_only=True)
    differences, sizes = {}, {}
    for view in ON_SPARK:
        duck = con.execute(f"SELECT * FROM {view}")
        duck_cols = [d[0] for d in duck.description]
        duck_rows = duck.fetchall()
        frame = spark.sql(f"SELECT * FROM {view}")
        sizes[view] = len(duck_rows)
        problem = compare(duck_cols, duck_rows, frame.columns, frame.collect())
        if problem:
            differences[view] = problem
    assert not differences, differences
    assert all(sizes.values()), f"a view is empty in the test warehouse, so it proves nothing: {sizes}"


def test_a_macro_inside_arithmetic_keeps_its_meaning():
    """A macro body is one term wherever it is called: y * anchor_log_p(z, s) multiplies the whole body."""
    import sqlglot

    from warehouse.spark_sql import expand_macros

    query = "SELECT 2 * anchor_log_p(-5.0, 0.1) AS x"
    spark_sql = expand_macros(sqlglot.parse_one(query, read="duckdb")).sql("duckdb")
    con = duckdb.connect()
    assert con.execute(spark_sql).fetchone()[0] == pytest.approx(
        2 * (np.log(0.9) - 5 - np.log1p(np.exp(-5))), abs=1e-12)
