"""The fleet on Apache Spark: one task per capture runs the embedded pipeline
(rows.capture_rows) where Spark schedules it, and the rows come back as a Spark
DataFrame written to the same layout as the local engine (findings/part-*.parquet).

On a cluster (`--master spark://host:7077`, `yarn`, `k8s://...`) every executor needs
the advisor installed (pip install writeback-advisor) and the capture paths readable
(a shared filesystem); stores are cached per executor (WRITEBACK_ADVISOR_CACHE)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pyarrow as pa

from advisor.errors import UsageError


def _spark_type(t: pa.DataType):
    from pyspark.sql import types as T

    if pa.types.is_string(t):
        return T.StringType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_int64(t):
        return T.LongType()
    raise TypeError(f"no Spark type for {t}")


def spark_schema(table_schema: pa.Schema):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _spark_type(f.type), True) for f in table_schema])


def task_rows(capture: tuple[str, str], rules_dir: str | None, columns: list[str]) -> list[tuple]:
    """What one Spark task runs: one capture's rows, as tuples in the table's column order.
    `capture`: the path as given (named in the rows) and as an absolute path (read: an
    executor's working directory is not the driver's)."""
    from advisor.fleet.rows import capture_rows

    given, absolute = capture
    return [tuple(row[c] for c in columns) for row in capture_rows(given, rules_dir, absolute)]


def session(master: str):
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("--engine spark needs pyspark: pip install 'writeback-advisor[spark]' (and a Java 17+ runtime)") from None
    # The executors' Python: this interpreter, so they import the same advisor.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        return (SparkSession.builder.master(master).appName("advisor fleet analyze")
                .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    except Exception as e:  # noqa: BLE001 - Java missing or the master unreachable: one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"cannot start Spark (master {master}): {first}") from None


def run_spark(paths: list[str], rules_dir: str | None, table_schema: pa.Schema, target: Path, master: str) -> None:
    spark = session(master)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        columns = table_schema.names
        captures = [(p, str(Path(p).absolute())) for p in paths]
        rdd = spark.sparkContext.parallelize(captures, numSlices=len(captures)).flatMap(
            lambda p: task_rows(p, rules_dir, columns))
        df = spark.createDataFrame(rdd, spark_schema(table_schema))
        # One file, rows in the local engine's order. repartition (a shuffle), not coalesce:
        # coalesce(1) would run every capture in one task; orderBy would run them twice
        # (once to sample the sort's range boundaries).
        df.repartition(1).sortWithinPartitions("capture", "rule").write.mode("overwrite").parquet(str(target))
    finally:
        spark.stop()
