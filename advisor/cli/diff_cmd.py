"""`advisor diff`: two captures of one workload, before and after a change."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli.console import RulesDirOption
from advisor.errors import UsageError


def diff(
    captures: Optional[List[Path]] = typer.Argument(None, help="BEFORE AFTER: two captures or stores."),
    before: Optional[List[Path]] = typer.Option(None, "--before", "-b", help="A capture of the setting before (repeatable: repeat runs)."),
    after: Optional[List[Path]] = typer.Option(None, "--after", "-a", help="A capture of the setting after (repeatable: repeat runs)."),
    json_out: bool = typer.Option(False, "--json", help="The comparison as JSON on stdout."),
    rules_dir: RulesDirOption = None,
) -> None:
    """Compare captures before and after a change: differing capture facts, operation latency
    percentiles with a bootstrap interval, and every rule's verdict and metrics side by side.

    Example: advisor diff before.dat after.dat

    Example: advisor diff -b stable0-run1.dat -b stable0-run2.dat -a stable1-run1.dat -a stable1-run2.dat
    """
    sides = _sides(list(captures or []), list(before or []), list(after or []))
    from advisor.cli.console import print_json  # noqa: PLC0415
    from advisor.cli.diff_view import render  # noqa: PLC0415
    from advisor.cli.sql_cmd import resolve_stores  # noqa: PLC0415
    from advisor.compare import compare_stores  # noqa: PLC0415
    from advisor.rules import load_rules  # noqa: PLC0415

    rules = load_rules(rules_dir)
    stores = [[(resolve_stores([p]), str(p)) for p in side] for side in sides]
    doc = compare_stores(stores[0], stores[1], rules)
    if json_out:
        print_json(doc)
    else:
        render(doc)


def _sides(captures: list[Path], before: list[Path], after: list[Path]) -> tuple[list[Path], list[Path]]:
    if captures and (before or after):
        raise UsageError("give either BEFORE AFTER or --before/--after, not both")
    if captures:
        if len(captures) != 2:
            raise UsageError(f"diff takes two captures, BEFORE and AFTER (got {len(captures)}); use --before/--after for repeat runs")
        before, after = [captures[0]], [captures[1]]
    if not before or not after:
        raise UsageError("diff needs a capture on each side: BEFORE AFTER, or --before ... --after ...")
    # Whether each exists is for the ingest to say: a blktrace capture is named by its
    # base name (sample_traces/blk-ext4-fsync for .blktrace.0, .blktrace.1).
    return before, after
