"""`advisor capture`: the trace-cmd / blktrace commands that record what the rules need."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import List, Optional

import typer

from advisor.capture.recipe import DEFAULT_BUFFER_KB, available_events, blktrace_argv, record_argv, together, tracefs_root
from advisor.capture.state import TracingState
from advisor.cli.console import err, print_json, warn
from advisor.errors import UsageError


def capture(
    rule: List[str] = typer.Option(["all"], "--for", help="Rule ids to record for (repeatable), or all."),
    duration: float = typer.Option(30.0, "--duration", "-t", help="Seconds to record."),
    device: Optional[str] = typer.Option(None, "--device", "-d", help="Also blktrace this block device, e.g. /dev/nvme0n1."),
    output: Path = typer.Option(Path("writeback.dat"), "--output", "-o", help="trace.dat to write (blktrace files go next to it)."),
    buffer_kb: int = typer.Option(DEFAULT_BUFFER_KB, "--buffer-kb", help="Per-CPU ring buffer (KiB)."),
    run: bool = typer.Option(False, "--run", help="Run the commands (as root) instead of printing them."),
    json_out: bool = typer.Option(False, "--json", help="The commands as JSON on stdout."),
) -> None:
    """Print (or --run) the recording commands for the chosen rules, with buffers sized against lost events.

    Example: advisor capture --for sync-flusher-stall --duration 60 --device /dev/sda
    """
    if duration <= 0:
        raise UsageError(f"--duration must be positive, not {duration:g}")
    if buffer_kb < 64:
        raise UsageError(f"--buffer-kb must be at least 64, not {buffer_kb}")
    from advisor.rules import load_rules  # noqa: PLC0415  (not at the CLI's start)

    rules = load_rules(None, list(rule))
    available = available_events()
    commands = [record_argv(rules, duration, str(output), buffer_kb, available)]
    if device:
        commands.append(blktrace_argv(device, duration, str(output.with_suffix("")) + ".blktrace"))
    if not run:
        if json_out:
            print_json({"rules": [r.id for r in rules], "commands": commands, "events_checked_against_this_kernel": available is not None})
        else:
            print(together(commands))
            if available is None:
                err.print("note: tracefs is not readable here; event names are those of current kernels (writeback_dirty_folio, folio_wait_writeback)")
        return
    raise typer.Exit(_run(commands))


def _run(commands: list[list[str]]) -> int:
    root = tracefs_root()
    if root is None:
        raise UsageError("tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing")
    if os.environ.get("WRITEBACK_ADVISOR_RECORD"):
        # A stand-in for `trace-cmd record` taking the same arguments (e.g. a wrapper
        # for a locked-down lab kernel).
        commands[0] = [*shlex.split(os.environ["WRITEBACK_ADVISOR_RECORD"]), *commands[0][2:]]
    state = TracingState.save(root)
    procs = []
    try:
        for argv in commands:
            if argv[0] == "blktrace":
                Path(argv[argv.index("-D") + 1]).mkdir(parents=True, exist_ok=True)
            err.print(f"running: {shlex.join(argv)}")
            try:
                procs.append(subprocess.Popen(argv))
            except FileNotFoundError:
                raise UsageError(f"{argv[0]}: not installed (apt-get install trace-cmd blktrace)") from None
        codes = [p.wait() for p in procs]
    except KeyboardInterrupt:
        # Ctrl-C reached the children too (same process group); let them flush and exit.
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        codes = [p.wait() for p in procs]
        err.print("interrupted: the recorders stopped; what they wrote is kept")
    finally:
        failed = state.restore()
        if failed:
            warn(f"could not restore {', '.join(failed)} under {root}")
    return 0 if all(c in (0, -signal.SIGINT, 130) for c in codes) else 2
