"""`advisor fleet analyze`: every rule over many captures, as one findings table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli.console import RulesDirOption

fleet = typer.Typer(help="Many captures at once: the findings of every capture as one Parquet table.", no_args_is_help=True)


@fleet.command("analyze")
def analyze(
    captures: List[str] = typer.Argument(..., metavar="CAPTURE...", help="Captures or stores: paths, glob patterns ('traces/*.dat'), or @FILE listing one a line."),
    output: Path = typer.Option(..., "-o", "--output", help="Directory for the findings table (OUT/findings/part-*.parquet; replaced if there)."),
    engine: str = typer.Option("local", "--engine", help="local (processes on this machine) or spark."),
    master: str = typer.Option("local[2]", "--master", help="Spark master URL for --engine spark (spark://host:7077, yarn, k8s://...)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Processes for --engine local (default: one per CPU)."),
    top: int = typer.Option(3, "--top", help="Hosts listed per rule in the summary."),
    json_out: bool = typer.Option(False, "--json", help="The summary as JSON on stdout."),
    rules_dir: RulesDirOption = None,
) -> None:
    """Run every rule (and the replay its findings quote) on each capture, write one row per
    capture and rule to a Parquet table, and summarize: verdicts by kernel, worst hosts per rule.

    Example: advisor fleet analyze 'captures/*.dat' -o findings/

    Example: advisor fleet analyze @hosts.txt -o findings/ --engine spark --master spark://head:7077
    """
    from advisor.cli.console import err, print_json  # noqa: PLC0415
    from advisor.cli.fleet_view import render  # noqa: PLC0415
    from advisor.errors import UsageError  # noqa: PLC0415
    from advisor.fleet import analyze_fleet, expand  # noqa: PLC0415
    from advisor.fleet.summary import summarize  # noqa: PLC0415

    from advisor.fleet.run import ENGINES  # noqa: PLC0415

    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs must be at least 1")
    paths = expand(captures)
    started = time.monotonic()
    where = f"Spark {master}" if engine == "spark" else f"{jobs or 'one per CPU'} local processes"
    err.print(f"analyzing {len(paths)} captures on {where}")

    def progress(done: int, total: int) -> None:
        err.print(f"  {done}/{total} captures", highlight=False)

    table = analyze_fleet(paths, output, engine, jobs, master, rules_dir, progress)
    seconds = time.monotonic() - started
    doc = summarize(table, top)
    doc.update(captures=len(paths), engine=engine, seconds=round(seconds, 3))
    err.print(f"{len(paths)} captures in {seconds:.1f} s ({engine}); findings: {table}")
    if json_out:
        print_json(doc)
    else:
        render(doc)
