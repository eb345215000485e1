"""`advisor replay`: what each kernel policy would have done with this capture's workload,
or with a synthetic one described on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from advisor.cli.console import JsonFlag, out, print_json, table, warn
from advisor.errors import TraceFormatError, UsageError


def replay(
    traces: Optional[List[Path]] = typer.Argument(None, metavar="TRACE...", help="The incident's captures (trace.dat, text, blktrace) or one store."),
    workload: Optional[str] = typer.Option(None, "--workload", "-w", metavar="NAME[:KEY=VALUE,...]", help="NAME[:key=value,...]: a synthetic workload instead of a capture (see --list-workloads)."),
    list_workloads: bool = typer.Option(False, "--list-workloads", help="The synthetic workloads and their parameters."),
    problem: Optional[List[str]] = typer.Option(None, "--problem", "-p", metavar="ID", help="Only this problem id (repeatable); default all five."),
    policy: Optional[List[str]] = typer.Option(None, "--policy", metavar="PROBLEM=POLICY[,POLICY]", help="PROBLEM=POLICY[,POLICY]: which policies to run for a problem."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", metavar="RELEASE", help=("Kernel release whose policies count as the capture's own (default: its uname); "
                                                                                      "for a capture without a uname (text), also the kernel it was recorded on.")),
    json_out: JsonFlag = False,
) -> None:
    """Replay the capture's page dirtying under each problem's kernel policies, side by side
    with what the capture shows; or replay a synthetic workload (the fixes' published benchmarks).

    Examples:
      advisor replay trace.dat --problem sync-flusher-stall
      advisor replay --workload fio-snapshot:rw=randwrite,jobs=4 --json
      advisor replay --workload fsmark-sync:device=nvme,mem=8G -p sync-flusher-stall
    """
    if list_workloads:
        _print_workloads(json_out)
        return
    # The engine and its models: only the commands that replay load them.
    from advisor.analyze import replay as engine
    from advisor.cli.replay_view import render

    if kernel is not None:
        from advisor.kernel import parse_release  # noqa: PLC0415

        parse_release(kernel)  # a malformed --kernel is a usage error here too, not ignored
    problems, policies = list(problem) if problem else None, list(policy) if policy else None
    doc = _replay(engine, traces or [], workload, problems, policies, kernel)
    if kernel is not None:
        doc["kernel_given"] = kernel
    for w in doc["warnings"]:
        warn(w)
    if json_out:
        print_json(doc)
    else:
        render(doc)


def _replay(engine, traces: list[Path], description: str | None, problems, policies, kernel) -> dict:
    # Loaded when replaying, not at the CLI's start (numpy, the workload SQL, the store).
    from advisor.cli.sql_cmd import resolve_stores  # noqa: PLC0415
    from advisor.store import open_store  # noqa: PLC0415
    from advisor.store.interrupts import interruptible  # noqa: PLC0415

    if description is not None and traces:
        raise UsageError("give captures or --workload, not both")
    if description is not None:
        selection = engine.select(problems, policies)
        return engine.replay(engine.synthetic(description), selection, kernel)
    if not traces:
        raise UsageError("nothing to replay: give captures, or --workload NAME (see --list-workloads)")
    store = resolve_stores(traces)
    label = str(traces[0]) if len(traces) == 1 else f"{len(traces)} inputs"
    with open_store(store) as con, interruptible(con):
        doc = engine.replay_store(con, label, problems, policies, kernel)
        if doc is None:
            raise TraceFormatError(f"{label}: {engine.nothing_to_replay(con)}")
    return doc


def _print_workloads(json_out: bool) -> None:
    from advisor import problems  # noqa: PLC0415
    from advisor.replay.synthetic import params_of  # noqa: PLC0415

    workloads = problems.synthetic_workloads()
    if json_out:
        print_json({name: {"summary": spec.SUMMARY, "params": {k: {"default": p.default, "kind": p.kind, "help": p.help}
                                                                 for k, p in params_of(spec).items()}}
                    for name, spec in workloads.items()})
        return
    for name, spec in workloads.items():
        t = table("parameter", "default", "kind", "meaning", title=f"{name}: {spec.SUMMARY}", names=("parameter",))
        for k, p in params_of(spec).items():
            t.add_row(k, p.default, p.kind, p.help)
        out.print(t, "")
