"""advisor fleet analyze on Apache Spark (local[2]): the same findings table as the local
engine, and the table read by Spark with the same answers as DuckDB. Needs pyspark (the
[test] extra) and a Java 17+ runtime (the Makefile installs openjdk-17-jre-headless)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.fleet.conftest import docs_query, fleet
from tests.helpers import advisor


@pytest.fixture(scope="module")
def spark_session():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        pytest.fail("pyspark is not installed: pip install -e '.[test]'")
    if not shutil.which("java"):
        pytest.fail("no Java runtime: apt-get install openjdk-17-jre-headless")
    spark = (SparkSession.builder.master("local[2]").appName("advisor fleet tests")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


def _rows(con, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def test_spark_local2_writes_the_local_engines_table(local_fleet, spark_session, tmp_path_factory):
    local_table, local_doc = local_fleet
    out = tmp_path_factory.mktemp("fleet") / "spark"
    doc = fleet(out, "--engine", "spark", "--master", "local[2]")
    spark_table = out / "findings"
    assert doc["engine"] == "spark"
    with duckdb.connect() as con:
        a, b = (f"read_parquet('{t}/*.parquet')" for t in (local_table, spark_table))
        assert [c[0] for c in con.execute(f"DESCRIBE SELECT * FROM {a}").fetchall()] == \
               [c[0] for c in con.execute(f"DESCRIBE SELECT * FROM {b}").fetchall()]
        assert _rows(con, f"SELECT count(*) FROM {a}") == _rows(con, f"SELECT count(*) FROM {b}")
        assert _rows(con, f"SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b}") == []
        assert _rows(con, f"SELECT * FROM {b} EXCEPT ALL SELECT * FROM {a}") == []
        # The same rows in the same order.
        assert _rows(con, f"SELECT capture, rule FROM {a}") == _rows(con, f"SELECT capture, rule FROM {b}")
    for key in ("verdicts_by_kernel", "worst_hosts", "errors"):
        assert doc[key] == local_doc[key]


def test_spark_reads_the_findings_table_with_duckdbs_answers(local_fleet, spark_session):
    table, _ = local_fleet
    spark_session.read.parquet(str(table)).createOrReplaceTempView("findings")
    queries = [
        # NULLs placed explicitly: Spark sorts them first, DuckDB last.
        "SELECT kernel, verdict, count(*) AS n FROM {t} GROUP BY kernel, verdict ORDER BY kernel NULLS FIRST, verdict",
        "SELECT rule, count(*) AS n, sum(write_stall_count) AS stalls, max(fsync_p99_ms) AS fsync_p99 FROM {t} "
        "WHERE verdict <> 'error' GROUP BY rule ORDER BY rule",
        "SELECT capture, replay_before, replay_after FROM {t} WHERE replay_metric IS NOT NULL ORDER BY capture, rule",
    ]
    with duckdb.connect() as con:
        for q in queries:
            by_duckdb = _rows(con, q.format(t=f"read_parquet('{table}/*.parquet')"))
            by_spark = [tuple(r) for r in spark_session.sql(q.format(t="findings")).collect()]
            assert by_spark == by_duckdb, q
        docs = docs_query(table)
        by_duckdb = _rows(con, docs)
    by_spark = [tuple(r) for r in spark_session.sql(docs.replace(f"read_parquet('{table}/*.parquet')", "findings")).collect()]
    assert by_duckdb and by_spark == by_duckdb


def test_spark_reads_an_ingested_dataset_like_duckdb_and_it_joins_the_findings(local_fleet, spark_session, tmp_path):
    """`advisor ingest --format parquet` datasets (Hive partitions host=/capture=) read by
    Spark and DuckDB give the same answers, and a finding's (host, capture_id) names its
    capture's partition."""
    out = tmp_path / "dataset"
    captures = ("sync-xfs-v6.dat", "tracefs-ext4.dat")
    for c in captures:
        r = advisor("ingest", "-f", "parquet", "-o", str(out), str(SAMPLES / c))
        assert r.code == 0, r.err
    # A capture id can be all digits: keep partition values text, as DuckDB is told below.
    spark_session.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    spark_session.read.parquet(str(out / "events")).createOrReplaceTempView("events")
    q = "SELECT host, capture, event, count(*) AS n, min(ts) AS first_ts FROM {t} GROUP BY host, capture, event ORDER BY host, capture, event"
    events = f"read_parquet('{out}/events/**/*.parquet', hive_partitioning = true, hive_types_autocast = false)"
    table, _ = local_fleet
    with duckdb.connect() as con:
        by_duckdb = _rows(con, q.format(t=events))
        joined = _rows(con, f"""SELECT f.capture, f.events, count(*) FROM read_parquet('{table}/*.parquet') f
                               JOIN {events} e ON e.host = f.host AND e.capture = f.capture_id
                               WHERE f.rule = 'sync-flusher-stall' GROUP BY ALL ORDER BY 1""")
    by_spark = [tuple(r) for r in spark_session.sql(q.format(t="events")).collect()]
    assert by_duckdb and by_spark == by_duckdb
    assert [Path(c).name for c, _, _ in joined] == sorted(captures)
    assert all(n == total for _, total, n in joined)
