"""`advisor report`: one self-contained HTML file to share or attach to a bug report."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from advisor.cli.console import JsonFlag, RulesDirOption, err, out, print_json
from advisor.errors import TraceIOError


def report(
    traces: List[Path] = typer.Argument(..., metavar="TRACE...", help="The incident's captures: trace.dat, ftrace text, blktrace data (or one store)."),
    output: Path = typer.Option(..., "-o", "--output", metavar="FILE", help="The HTML file to write."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", metavar="RELEASE", help="Kernel release to judge against (default: the capture's uname)."),
    problem: Optional[List[str]] = typer.Option(None, "--problem", "-p", metavar="ID", help="Replay only this problem id (repeatable); default all five."),
    no_replay: bool = typer.Option(False, "--no-replay", help="Leave the replay out."),
    json_out: JsonFlag = False,
    rules_dir: RulesDirOption = None,
    compare: Optional[Path] = typer.Option(None, "--compare", metavar="TRACE", help="A capture after a change: both on one page, on shared axes (as advisor diff)."),
) -> None:
    """Write an HTML report: findings with evidence, charts of the incident on one time axis
    (dirty pages, throughput, IO latency, sync/fsync spans, writer stalls) and the replay.

    The file needs no network to open: charts are inline SVG.

    Example: advisor report trace.dat -o report.html

    Example: advisor report before.dat --compare after.dat -o diff.html
    """
    # matplotlib only when a report is written: every other command starts (and ingests,
    # whose peak memory tests/hostile bounds) without it; the rules and the store too.
    from advisor.cli.sql_cmd import resolve_stores  # noqa: PLC0415
    from advisor.kernel import parse_release  # noqa: PLC0415
    from advisor.report import build  # noqa: PLC0415
    from advisor.report.compose import STEPS  # noqa: PLC0415
    from advisor.rules import load_rules  # noqa: PLC0415
    from advisor.store import open_store  # noqa: PLC0415
    from advisor.store.interrupts import interruptible  # noqa: PLC0415

    release = parse_release(kernel) if kernel is not None else None
    rules = load_rules(rules_dir)
    problems = list(problem) if problem else None
    if problems:
        from advisor.analyze import replay as engine  # the models: loaded only when a report is made

        engine.select(problems, None)  # unknown ids are usage errors before any work
    if output.is_dir():
        raise TraceIOError(f"{output}: is a directory")
    if not output.parent.is_dir():
        raise TraceIOError(f"{output}: no such directory {output.parent}")
    if compare is not None and not compare.exists():
        raise TraceIOError(f"{compare}: No such file or directory")
    store = resolve_stores(traces)
    label = str(traces[0]) if len(traces) == 1 else f"{len(traces)} inputs"
    if compare is not None:
        from advisor.report.compare import build_compare  # noqa: PLC0415

        text = build_compare((store, label), (resolve_stores([compare]), str(compare)), rules)
        _write(output, text, json_out)
        return
    # Not on a pipe or a file: there a transient bar leaves an empty line behind.
    progress = Progress(TextColumn("report: {task.description}"), BarColumn(), TimeElapsedColumn(), console=err, transient=True,
                        disable=not err.is_terminal)
    with progress, open_store(store) as con, interruptible(con):
        task = progress.add_task("", total=len(STEPS))

        def step(name: str) -> None:
            progress.update(task, description=name, completed=STEPS.index(name))

        text = build(con, label, rules, release, kernel, replay=not no_replay, problems=problems, step=step)
    _write(output, text, json_out)


def _write(output: Path, text: str, json_out: bool) -> None:
    from advisor.store.output import replacing  # noqa: PLC0415

    with replacing(output) as f:  # a full disk leaves no cut report behind
        f.write(text)
    size = len(text.encode())
    if json_out:
        print_json({"output": str(output), "bytes": size})
    else:
        out.print(f"wrote {output} ({size / 1e6:.2f} MB)", markup=False, highlight=False)
