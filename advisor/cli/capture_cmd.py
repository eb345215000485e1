"""`advisor capture`: the trace-cmd / blktrace commands that record what the rules need."""

from __future__ import annotations

import math
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import List, Optional

import typer

from advisor.capture.recipe import (
    DEFAULT_BUFFER_KB,
    available_events,
    blktrace_argv,
    missing_events,
    record_argv,
    together,
    tracefs_root,
    why_missing,
)
from advisor.capture.state import TracingState
from advisor.cli.console import JsonFlag, err, print_json, warn
from advisor.errors import UsageError


def capture(
    rule: List[str] = typer.Option(["all"], "--for", metavar="ID", help="Rule ids to record for (repeatable), or all."),
    duration: float = typer.Option(30.0, "--duration", "-t", metavar="SECONDS", help="Seconds to record."),
    device: Optional[str] = typer.Option(None, "--device", "-d", metavar="DEV", help="Also blktrace this block device, e.g. /dev/nvme0n1."),
    output: Path = typer.Option(Path("writeback.dat"), "--output", "-o", metavar="FILE", help="trace.dat to write (blktrace files go next to it)."),
    buffer_kb: int = typer.Option(DEFAULT_BUFFER_KB, "--buffer-kb", metavar="KIB", help="Per-CPU ring buffer (KiB)."),
    run: bool = typer.Option(False, "--run", help="Run the commands (as root) instead of printing them."),
    json_out: JsonFlag = False,
) -> None:
    """Print (or --run) the recording commands for the chosen rules, with buffers sized against lost events.

    Example: advisor capture --for sync-flusher-stall --duration 60 --device /dev/sda
    """
    if not math.isfinite(duration) or duration <= 0 or duration > MAX_DURATION_S:
        raise UsageError(f"--duration must be a number of seconds above 0 and at most {MAX_DURATION_S} (a week), not {duration:g}")
    if not 64 <= buffer_kb <= MAX_BUFFER_KB:
        raise UsageError(f"--buffer-kb must be between 64 and {MAX_BUFFER_KB} (4 GiB per CPU), not {buffer_kb}")
    from advisor.rules import load_rules  # noqa: PLC0415  (not at the CLI's start)

    rules = load_rules(None, list(rule))
    available = available_events()
    skipped = missing_events(rules, available)
    if skipped:
        # One line: which events are left out and why (trace-cmd would refuse them all).
        warn("; ".join(why_missing(skipped, available or set())))
    commands = [record_argv(rules, duration, str(output), buffer_kb, available)]
    if "-e" not in commands[0]:
        raise UsageError(f"this kernel has none of the events {', '.join(r.id for r in rules)} need(s): nothing to record")
    if device:
        commands.append(blktrace_argv(device, duration, str(output.with_suffix("")) + ".blktrace"))
    if not run:
        if json_out:
            print_json({"rules": [r.id for r in rules], "commands": commands, "events_checked_against_this_kernel": available is not None,
                        "skipped_events": skipped})
        else:
            print(together(commands))
            if available is None:
                err.print("note: tracefs is not readable here; event names are those of current kernels (writeback_dirty_folio, folio_wait_writeback)")
        return
    raise typer.Exit(_run(commands, duration))


def _run(commands: list[list[str]], duration: float) -> int:
    root = tracefs_root()
    if root is None:
        raise UsageError("tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing")
    if os.environ.get("WRITEBACK_ADVISOR_RECORD"):
        # A stand-in for `trace-cmd record` taking the same arguments (e.g. a wrapper
        # for a locked-down lab kernel).
        commands[0] = [*shlex.split(os.environ["WRITEBACK_ADVISOR_RECORD"]), *commands[0][2:]]
    recorded = [a for i, a in enumerate(commands[0]) if i and commands[0][i - 1] == "-e"]
    try:
        state = TracingState.save(root, recorded)
    except OSError as e:
        raise UsageError(f"{e.filename or root}: cannot read the tracing state ({e.strerror}); run as root") from None
    procs = []
    try:
        for argv in commands:
            if argv[0] == "blktrace":
                Path(argv[argv.index("-D") + 1]).mkdir(parents=True, exist_ok=True)
            # One line per command, as typed (no wrapping at the console width, no markup: `[` in a filter).
            err.print(f"running: {shlex.join(argv)}", soft_wrap=True, markup=False)
            try:
                procs.append(subprocess.Popen(argv))
            except FileNotFoundError:
                raise UsageError(f"{argv[0]}: not installed (apt-get install trace-cmd blktrace)") from None
        # The recorders stop by themselves after `duration`; past that and a
        # margin for writing out their buffers, they are stopped.
        codes = wait_all(procs, duration + FINISH_S)
    except KeyboardInterrupt:
        # Ctrl-C reached the children too (same process group); let them flush and exit.
        codes = stop_all(procs)
        err.print("interrupted: the recorders stopped; what they wrote is kept")
    finally:
        failed = state.restore()
        if failed:
            warn(f"could not restore {', '.join(failed)} under {root}")
    return 0 if all(c in (0, -signal.SIGINT, 130) for c in codes) else 2


#: Bounds on what --duration and --buffer-kb may ask for.
MAX_DURATION_S = 7 * 24 * 3600
MAX_BUFFER_KB = 4 << 20
#: How long recorders get to write out their buffers: after their duration,
#: and after SIGINT before SIGTERM, and after SIGTERM before SIGKILL.
FINISH_S = 60
TERM_S = 10


def wait_all(procs: list[subprocess.Popen], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            warn(f"{p.args[0]} still runs {timeout:.0f} s after it started: stopping it")
            return stop_all(procs)
    return [p.returncode for p in procs]


def stop_all(procs: list[subprocess.Popen]) -> list[int]:
    """SIGINT (the recorders write out what they hold), then SIGTERM, then
    SIGKILL, each after a bounded wait."""
    for sig, wait_s in ((signal.SIGINT, FINISH_S), (signal.SIGTERM, TERM_S), (signal.SIGKILL, TERM_S)):
        running = [p for p in procs if p.poll() is None]
        if not running:
            break
        for p in running:
            p.send_signal(sig)
        deadline = time.monotonic() + wait_s
        for p in running:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    return [p.returncode if p.returncode is not None else -signal.SIGKILL for p in procs]
