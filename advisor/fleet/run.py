"""Run the embedded pipeline (rows.capture_rows) over many captures and write the
findings table: OUT/findings/part-*.parquet, one row per capture and rule.

Engines: `local` (a process per core, concurrent.futures) and `spark` (spark_engine.py:
one Spark task per capture). Both write the same columns; rows are sorted by capture
and rule, so the tables compare equal whatever engine made them."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from advisor.errors import TraceIOError, UsageError
from advisor.fleet.rows import capture_rows, schema

ENGINES = ("local", "spark")
TABLE = "findings"


def analyze_fleet(captures: list[Path], out: Path, engine: str = "local", jobs: int | None = None,
                  master: str = "local[2]", rules_dir: Path | None = None, progress=None) -> Path:
    """Write the findings table under `out`; returns its directory."""
    from advisor.rules import load_rules

    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    rules_arg = str(Path(rules_dir).absolute()) if rules_dir else None  # executors may run elsewhere
    table_schema = schema(load_rules(rules_dir))
    target = out / TABLE
    _prepare(out, target)
    paths = [str(p) for p in captures]
    if engine == "spark":
        from advisor.fleet.spark_engine import run_spark

        run_spark(paths, rules_arg, table_schema, target, master)
        return target
    rows = []
    workers = max(1, min(jobs or os.cpu_count() or 1, len(paths)))
    # spawn, not fork: the parent may hold DuckDB's threads, which fork copies badly.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        # Read by absolute path, as Spark's executors do, so both engines' rows (error
        # messages included) are the same.
        absolute = [str(Path(p).absolute()) for p in paths]
        for n, capture in enumerate(pool.map(capture_rows, paths, [rules_arg] * len(paths), absolute), 1):
            rows += capture
            if progress:
                progress(n, len(paths))
    write_table(rows, table_schema, target)
    return target


def write_table(rows: list[dict], table_schema: pa.Schema, target: Path) -> None:
    table = pa.Table.from_pylist(rows, schema=table_schema).sort_by([("capture", "ascending"), ("rule", "ascending")])
    target.mkdir(parents=True)
    pq.write_table(table, target / "part-00000.parquet")


def _prepare(out: Path, target: Path) -> None:
    """OUT is created if needed; a findings table already there is replaced (both engines)."""
    if out.exists() and not out.is_dir():
        raise TraceIOError(f"{out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target)
