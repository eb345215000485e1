"""The commands that record what a set of rules needs.

Event names differ between kernels (`writeback_dirty_page` before 5.16,
`writeback_dirty_folio` from 5.16). When the local tracefs is readable, each
role is recorded under the name this kernel has; otherwise under the newest
name, which is what a current kernel needs.

An event the running kernel does not have is left out of the command, not
asked for: trace-cmd refuses the whole recording when one `-e` names a
missing event. A whole system is missing when its module is not loaded (no
events/btrfs/ on a kernel without btrfs loaded); a single event, when the
kernel predates it.
"""

from __future__ import annotations

import os
import shlex
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.recording import RECORD_BUFFER_KB

if TYPE_CHECKING:
    from advisor.rules.model import Rule

TRACEFS_ROOTS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
# Per-CPU ring buffer, KiB. trace-cmd's reader drains it continuously to disk, so it
# must absorb only the bursts between reads: page-granular writeback events arrive at
# ~1-3 M/s under a fast writer (about 40-60 bytes each), so 64 MiB covers tens of
# seconds of a reader falling behind. Lost events are still reported by `advisor ingest`.
DEFAULT_BUFFER_KB = RECORD_BUFFER_KB
# blktrace: 512 KiB sub-buffers x 16 per CPU, for the same reason (default 512 KiB x 4 drops under load).
BLKTRACE_BUFFER_ARGS = ("-b", "512", "-n", "16")


#: Where tracefs is, when not at one of TRACEFS_ROOTS (a mount elsewhere, or a copy
#: of another machine's tracefs for printing its commands).
TRACEFS_ENV = "WRITEBACK_ADVISOR_TRACEFS"


def tracefs_root() -> Path | None:
    if os.environ.get(TRACEFS_ENV):
        root = Path(os.environ[TRACEFS_ENV])
        return root if (root / "events").is_dir() else None
    for root in TRACEFS_ROOTS:
        if (root / "events").is_dir():
            return root
    return None


def available_events(root: Path | None = None) -> set[str] | None:
    """Every "system:event" the running kernel offers, or None when tracefs is not readable."""
    root = root or tracefs_root()
    if root is None:
        return None
    try:
        # One "system:event" a line, as `trace-cmd list -e` prints them: `btrfs:btrfs_sync_file`.
        listed = (root / "available_events").read_text().split()
        if listed:
            return set(listed)
    except OSError:
        pass
    try:
        return {f"{s.name}:{e.name}" for s in (root / "events").iterdir() if s.is_dir() for e in s.iterdir() if e.is_dir()}
    except OSError:
        return None


def wanted_events(rules: list[Rule], available: set[str] | None = None) -> list[str]:
    """Each event once, in rule order: the events that fill the views the rules read
    (advisor.views), under the names this kernel has, present or not."""
    from advisor.views import record_events  # noqa: PLC0415 - views import the store

    out: dict[str, None] = {}
    for rule in rules:
        for name in record_events(list(rule.needs), available):
            out.setdefault(name)
    return list(out)


def missing_events(rules: list[Rule], available: set[str] | None) -> list[str]:
    """The events the rules want that this kernel does not have (none when tracefs is not readable)."""
    if available is None:
        return []
    return [e for e in wanted_events(rules, available) if e not in available]


def why_missing(missing: list[str], available: set[str]) -> list[str]:
    """One reason per system, each event named, for the warning: `btrfs not loaded (no
    events/btrfs/ in tracefs): 3 btrfs events skipped (btrfs:btrfs_flush_space, ...)`
    when the kernel has no event of that system at all, else `not in this kernel: 1
    writeback event skipped (writeback:writeback_dirty_folio)`."""
    systems = {e.partition(":")[0] for e in available}
    by_system: dict[str, list[str]] = defaultdict(list)
    for e in missing:
        by_system[e.partition(":")[0]].append(e)
    out = []
    for system, names in by_system.items():
        n = f"{len(names)} {system} event{'s' if len(names) != 1 else ''} skipped"
        listed = ", ".join(names)
        if system in systems:
            out.append(f"not in this kernel: {n} ({listed})")
        else:
            out.append(f"{system} not loaded (no events/{system}/ in tracefs): {n} ({listed})")
    return out


def event_args(rules: list[Rule], available: set[str] | None = None) -> list[tuple[str, str | None]]:
    """(system:event, filter) pairs for the command: the wanted events this kernel has
    (all of them when tracefs is not readable)."""
    return [(e, None) for e in wanted_events(rules, available) if available is None or e in available]


def record_argv(rules: list[Rule], duration: float = 30, output: str = "writeback.dat", buffer_kb: int = DEFAULT_BUFFER_KB,
                available: set[str] | None = None) -> list[str]:
    # -C mono: the clock blktrace stamps its records with (ktime_get() in
    # kernel/trace/blktrace.c), so a trace.dat and blktrace files of one run share one
    # time axis and join without correction. trace-cmd's default, `local`, is a
    # per-CPU clock that drifts from it (16 ms apart on one VM capture).
    argv = ["trace-cmd", "record", "-C", "mono", "-b", str(buffer_kb), "-o", output]
    for name, flt in event_args(rules, available):
        argv += ["-e", name]
        if flt:
            argv += ["-f", flt]
    return argv + ["sleep", f"{duration:g}"]


def blktrace_argv(device: str, duration: float = 30, outdir: str = "blktrace") -> list[str]:
    return ["blktrace", "-d", device, "-w", f"{int(max(1, round(duration)))}", *BLKTRACE_BUFFER_ARGS, "-D", outdir]


def together(commands: list[list[str]]) -> str:
    """One shell line that runs the recorders at the same time: blktrace in the background,
    trace-cmd in the foreground for the duration, then waits for blktrace (which stops
    after its own -w seconds). Two lines pasted one after the other would record the
    layers one after the other."""
    if len(commands) == 1:
        return shlex.join(commands[0])
    background = [c for c in commands if c[0] != "trace-cmd"]
    foreground = [c for c in commands if c[0] == "trace-cmd"]
    dirs = [c[c.index("-D") + 1] for c in background if "-D" in c]
    mkdir = f"mkdir -p {' '.join(shlex.quote(d) for d in dirs)} && " if dirs else ""
    return (mkdir + " ".join(f"{shlex.join(c)} &" for c in background) + " "
            + " && ".join(shlex.join(c) for c in foreground) + "; wait")


def record_command(rules: list[Rule], duration: float = 30, output: str = "writeback.dat") -> str:
    """One shell line, for messages (e.g. an insufficient-data finding)."""
    return shlex.join(record_argv(rules, duration, output))
