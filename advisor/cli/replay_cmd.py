"""`advisor replay`: what each kernel policy would have done with this capture's workload."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli.console import print_json
from advisor.cli.sql_cmd import resolve_stores
from advisor.errors import TraceFormatError
from advisor.replay import engine
from advisor.replay.report import render
from advisor.replay.workload import from_store
from advisor.store import open_store


def replay(
    traces: List[Path] = typer.Argument(..., help="The incident's captures (trace.dat, text, blktrace) or one store."),
    problem: Optional[List[str]] = typer.Option(None, "--problem", "-p", help="Only this problem id (repeatable); default all five."),
    policy: Optional[List[str]] = typer.Option(None, "--policy", help="PROBLEM=POLICY[,POLICY]: which policies to run for a problem."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Kernel release whose policies count as the capture's own (default: its uname)."),
    json_out: bool = typer.Option(False, "--json", help="{workload, observed, results} as JSON on stdout."),
) -> None:
    """Replay the capture's page dirtying under each problem's kernel policies, side by side
    with what the capture shows.

    Example: advisor replay sample_traces/sync-xfs-v6.dat --problem sync-flusher-stall
    """
    selection = engine.select(list(problem) if problem else None, list(policy) if policy else None)
    store = resolve_stores(traces)
    label = str(traces[0]) if len(traces) == 1 else f"{len(traces)} inputs"
    with open_store(store) as con:
        workload = from_store(con, label)
    if not len(workload.dirty_ts):
        raise TraceFormatError(f"{label}: no page-dirtying events (writeback:writeback_dirty_folio/_page) to replay")
    doc = engine.replay(workload, selection, kernel)
    if json_out:
        print_json(doc)
    else:
        render(doc)
