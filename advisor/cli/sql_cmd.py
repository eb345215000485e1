"""`advisor sql`: SQL over a capture's store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from advisor.cli.console import warn
from advisor.cli.progress import bytes_progress
from advisor.errors import UsageError


def resolve_stores(traces: list[Path]) -> Path:
    """A store file as is; captures through their cached store."""
    # DuckDB and Arrow load with the commands that use them, not with the CLI
    # (`advisor io` on blktrace files needs neither).
    from advisor.store import store_for  # noqa: PLC0415
    from advisor.store.cache import given_store, is_store  # noqa: PLC0415

    if len(traces) == 1 and traces[0].is_file() and is_store(traces[0]):
        return given_store(traces[0])
    for t in traces:
        if t.is_file() and is_store(t):
            raise UsageError(f"{t}: is a store; give it alone")
    label = traces[0].name if len(traces) == 1 else f"{len(traces)} inputs"
    with bytes_progress(f"ingest {label}") as progress:
        r = store_for(traces, progress=progress)
    if r.damaged:
        warn(f"{r.damage[0] if r.damage else label}: damaged; results cover what could be read")
    return r.store


def sql(
    trace: Path = typer.Argument(..., metavar="TRACE", help="A trace (ingested on first use) or a store (.duckdb)."),
    query: Optional[str] = typer.Argument(None, metavar="QUERY", help="SQL to run (';' between statements); omit for the interactive shell."),
    fmt: str = typer.Option("table", "--format", "-f", metavar="table|csv|json|parquet", help="How the result is written: a table to read, csv, json (an array of objects) or parquet (needs -o)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", metavar="FILE", help="Write the result to a file."),
    max_rows: int = typer.Option(1000, "--limit", "--max-rows", "-n", metavar="N", min=1, help="Rows shown by --format table; a cut table says how many it left out."),
    allow_write: list[str] = typer.Option(
        [],
        "--allow-write",
        metavar="PATH",
        help="Let COPY ... TO write this file (or EXPORT DATABASE this directory, named with a trailing '/', from a store"
        " written with `ingest --single-file`); queries read nothing but the store otherwise. Repeatable.",
    ),
    memory_limit: Optional[str] = typer.Option(
        None,
        "--memory-limit",
        metavar="SIZE",
        help="Memory the queries may use, in DuckDB's units (500MB, 2GB; default 80% of RAM). Sorts and joins"
        " beyond it spill to STORE.tmp next to the store, and a query fails if they cannot.",
    ),
) -> None:
    """Run SQL over every event of a capture.

    Queries run in a sandbox: the store read-only, no other file, no network, no extensions.

    Example: advisor sql trace.dat "select event, count(*) from events group by 1"
    """
    from advisor.cli.results import check_format  # noqa: PLC0415
    from advisor.store.interrupts import interruptible  # noqa: PLC0415
    from advisor.store.sandbox import open_sandboxed  # noqa: PLC0415

    fmt = check_format(fmt)
    store = resolve_stores([trace])
    writable = list(allow_write) + ([str(output)] if output is not None and fmt == "parquet" else [])
    con = open_sandboxed(store, writable, memory_limit)
    try:
        with interruptible(con):
            _run(con, query, fmt, output, max_rows)
    finally:
        con.close()


def _run(con, query: Optional[str], fmt: str, output: Optional[Path], max_rows: int) -> None:
    """The views, the sandbox locked, then the shell or the query."""
    from advisor.cli.repl import Shell, dot_query  # noqa: PLC0415
    from advisor.cli.results import run_statements  # noqa: PLC0415
    from advisor.store.sandbox import lock  # noqa: PLC0415
    from advisor.views import attach  # noqa: PLC0415

    attach(con)  # the domain views (sync_ops, dirtying, reclaim, ...) next to the event tables
    lock(con)
    if query is None and sys.stdin.isatty():
        Shell(con, max_rows).loop()
        return
    if query is None:
        query = sys.stdin.read()
    if query.strip().startswith("."):
        # The shell's .tables / .schema / .info / .stats work here too.
        line = query.strip()
        query = dot_query(con, line)
        if query is None:
            raise UsageError(f"unknown command {line!r}: .tables, .schema [NAME], .info and .stats work outside the shell")
    run_statements(con, query, fmt, output, max_rows)
