"""`advisor ingest`: parse the captures of one incident into a store."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import summary
from advisor.cli.console import print_json, warn
from advisor.cli.progress import bytes_progress
from advisor.errors import DamagedCaptureError, UsageError
from advisor.store import ingest as ingest_store
from advisor.store import store_for
from advisor.store.cache import is_store


def ingest(
    traces: List[Path] = typer.Argument(
        ...,
        help="The captures of one incident: a trace.dat or ftrace text, and/or blktrace data "
        "(NAME or NAME.blktrace.N per-CPU files, a blkparse -d file, or - for stdin).",
    ),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the store here instead of the cache."),
    force: bool = typer.Option(False, "--force", help="Re-parse even when a cached store exists; overwrite -o."),
    json_out: bool = typer.Option(False, "--json", help="A JSON summary on stdout."),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when the kernel reported lost events too."),
) -> None:
    """Parse captures into one DuckDB store (cached by content hash).

    Example: advisor ingest sample_traces/blk-ext4-fsync.dat sample_traces/blk-ext4-fsync -o incident.duckdb
    """
    for trace in traces:
        if str(trace) != "-" and trace.is_file() and is_store(trace):
            raise UsageError(f"{trace}: is already a store (query it with `advisor sql`)")
    label = traces[0].name if len(traces) == 1 else f"{len(traces)} inputs"
    with bytes_progress(f"ingest {label}") as progress:
        if output:
            if output.exists() and not force:
                raise UsageError(f"{output}: exists (use --force to overwrite)")
            r = ingest_store(traces, output, progress=progress)
        else:
            r = store_for(traces, progress=progress, force=force)
    if json_out:
        print_json(summary.as_dict(r))
    else:
        summary.render(r)
    if r.damaged:
        # Bad input exits 2, after keeping everything read before the damage.
        raise DamagedCaptureError(summary.damage_error(r))
    if strict and r.data_loss:
        warn("--strict: the kernel lost events during the capture")
        raise typer.Exit(2)
