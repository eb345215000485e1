"""`advisor analyze`: which documented writeback problem a capture shows, with evidence."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli.console import JsonFlag, RulesDirOption, err, out, print_json
from advisor.errors import UsageError

FAIL_ON = ("affected", "at-risk")


def analyze(
    traces: List[Path] = typer.Argument(..., metavar="TRACE...", help="The incident's captures: trace.dat, ftrace text, blktrace data (or one store)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", metavar="RELEASE", help="Kernel release to judge against, e.g. 5.10.7 or 5.10.0-28-amd64 (default: the capture's uname)."),
    rule: Optional[List[str]] = typer.Option(None, "--rule", "-r", metavar="ID", help="Only these rule ids (repeatable); default all."),
    json_out: JsonFlag = False,
    limit: Optional[int] = typer.Option(None, "--limit", "-n", metavar="N", min=1, help="Rows per evidence table (default: the rule's own, 5 to 20); a cut table says how many it left out."),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", metavar="affected|at-risk", help="Exit 1 when a finding is at or above this level: affected or at-risk."),
    rules_dir: RulesDirOption = None,
    plots: bool = typer.Option(False, "--plots", help="Also draw the incident in the terminal (dirty pages, throughput, IO latency, stalls)."),
) -> None:
    """Match a capture against the documented writeback problems: verdict, evidence, recommendation per rule.

    Example: advisor analyze trace.dat --kernel 3.10.0

    Example: advisor analyze trace.dat --plots
    """
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    # Loaded here, not at start-up: every other command starts faster without them.
    from advisor.analyze import diagnose  # noqa: PLC0415
    from advisor.analyze.document import worst  # noqa: PLC0415
    from advisor.cli.analyze_view import render  # noqa: PLC0415
    from advisor.cli.sql_cmd import resolve_stores  # noqa: PLC0415
    from advisor.kernel import parse_release  # noqa: PLC0415
    from advisor.rules import SEVERITY, load_rules  # noqa: PLC0415
    from advisor.store import open_store  # noqa: PLC0415
    from advisor.store.interrupts import interruptible  # noqa: PLC0415

    release = parse_release(kernel) if kernel is not None else None
    rules = load_rules(rules_dir, list(rule) if rule else None)
    if limit is not None:
        rules = [replace(r, evidence=type(r.evidence)(replace(e, limit=limit) for e in r.evidence)) for r in rules]
    store = resolve_stores(traces)
    label = str(traces[0]) if len(traces) == 1 else f"{len(traces)} inputs"
    with open_store(store) as con, interruptible(con):
        doc = diagnose(con, rules, release, label)
        drawn = _plots(con, err if json_out else out) if plots else None
    if json_out:
        print_json(doc)
    else:
        render(doc)
    if drawn:
        # Charts are results too, after the panels; with --json, stdout holds only the
        # document, so they go to stderr.
        (err if json_out else out).file.write(drawn + "\n")
    if fail_on is not None and worst(doc) >= SEVERITY[fail_on]:
        raise typer.Exit(1)


def _plots(con, console) -> str:
    """The terminal charts (plotext, loaded only for --plots)."""
    from advisor.cli import plots as terminal_plots  # noqa: PLC0415
    from advisor.report.series import incident  # noqa: PLC0415

    return terminal_plots.render(incident(con), min(console.width, 120), colour=console.is_terminal)
