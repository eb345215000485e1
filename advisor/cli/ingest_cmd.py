"""`advisor ingest`: parse captures into stores."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli.console import print_json, warn
from advisor.cli.progress import bytes_progress
from advisor.cli import summary
from advisor.errors import UsageError
from advisor.store import ingest_trace, store_for
from advisor.store.cache import is_store
from advisor import parsers


def ingest(
    traces: List[Path] = typer.Argument(..., help="trace.dat files or ftrace text captures."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the store here instead of the cache."),
    force: bool = typer.Option(False, "--force", help="Re-parse even when a cached store exists; overwrite -o."),
    json_out: bool = typer.Option(False, "--json", help="A JSON summary on stdout."),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when the capture is damaged or lost events."),
) -> None:
    """Parse captures into DuckDB stores (cached by content hash).

    Example: advisor ingest sample_traces/fio-ext4-v7-zstd.dat
    """
    if output and len(traces) > 1:
        raise UsageError("one store holds one capture: give a single trace with -o, or omit -o to use the cache")
    results = []
    for trace in traces:
        if trace.exists() and trace.is_file() and is_store(trace):
            raise UsageError(f"{trace}: is already a store (query it with `advisor sql`)")
        with bytes_progress(f"ingest {trace.name}") as progress:
            if output:
                if output.exists() and not force:
                    raise UsageError(f"{output}: exists (use --force to overwrite)")
                r = ingest_trace(trace, output, parsers.file_digest(trace), progress)
            else:
                r = store_for(trace, progress=progress, force=force)
        results.append(r)
        if json_out:
            summary.warn_damage(r)
        else:
            summary.render(r)
    if json_out:
        docs = [summary.as_dict(r) for r in results]
        print_json(docs[0] if len(docs) == 1 else docs)
    if strict and any(r.damaged or r.data_loss for r in results):
        warn("--strict: the capture is damaged or lost events")
        raise typer.Exit(2)
