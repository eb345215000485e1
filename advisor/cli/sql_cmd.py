"""`advisor sql`: SQL over a capture's store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from advisor.cli.progress import bytes_progress
from advisor.cli.repl import Shell
from advisor.cli.results import check_format, run_query, write
from advisor.errors import TraceIOError
from advisor.store import open_store, store_for
from advisor.store.cache import is_store


def resolve_store(trace: Path) -> Path:
    """A store file as is; a trace through its cached store."""
    if not trace.exists():
        raise TraceIOError(f"{trace}: no such file")
    if trace.is_file() and is_store(trace):
        return trace
    with bytes_progress(f"ingest {trace.name}") as progress:
        return store_for(trace, progress=progress).store


def sql(
    trace: Path = typer.Argument(..., help="A trace (ingested on first use) or a store (.duckdb)."),
    query: Optional[str] = typer.Argument(None, help="SQL to run; omit for the interactive shell."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, json or parquet."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the result to a file."),
    max_rows: int = typer.Option(1000, "--max-rows", help="Rows shown by --format table."),
) -> None:
    """Run SQL over every event of a capture.

    Example: advisor sql sample_traces/fio-ext4-v7-zstd.dat "select event, count(*) from events group by 1"
    """
    fmt = check_format(fmt)
    store = resolve_store(trace)
    con = open_store(store)
    try:
        if query is None and sys.stdin.isatty():
            Shell(con, max_rows).loop()
            return
        if query is None:
            query = sys.stdin.read()
        cur = run_query(con, query)
        write(cur, fmt, output, max_rows, con=con, query=query)
    finally:
        con.close()
