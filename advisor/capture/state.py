"""Save and restore the tracing state that `advisor capture --run` touches.

trace-cmd record restores what it changed when it exits normally; when it is
killed, events stay enabled and tracing stays on, with its filters, pid lists,
clock and buffer sizes. So every such setting is saved before the run and
written back afterwards, whatever happened; a setting is written only when it
differs from what was saved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: Files holding one value, written back as read: tracing on/off, the tracer
#: (trace-cmd sets `nop`), how full a buffer gets before readers wake, which
#: CPUs trace, how many comms are remembered.
PLAIN = ("tracing_on", "current_tracer", "buffer_percent", "tracing_cpumask", "saved_cmdlines_size")
#: Pid lists (`trace-cmd record -P/-F` fills them).
PID_LISTS = ("set_event_pid", "set_event_notrace_pid")


def buffer_kb(text: str) -> str:
    """The size to write back from what buffer_size_kb reads. Before any
    tracing the kernel keeps a minimal buffer and shows the size it will grow
    to: `7 (expanded: 1408)`, which is not a value the file accepts; 1408 is
    the setting. Per-CPU sizes that differ read `X` at the top level."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:\(expanded:\s*(\d+)\))?\s*", text)
    if not m:
        return text.strip()
    return m.group(2) or m.group(1)


def clock(text: str) -> str:
    """trace_clock lists every clock, the current one in brackets: `[local] global counter ...`."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip()


@dataclass
class TracingState:
    root: Path
    values: dict[str, str] = field(default_factory=dict)  # file (relative to root) -> value to write back
    enabled_events: list[str] = field(default_factory=list)
    pids: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def save(cls, root: Path, events: list[str] = ()) -> "TracingState":
        """The state now; `events` ("system:event"): those whose filters the
        recording may set (`trace-cmd record -e E -f FILTER`)."""
        s = cls(root)
        read = lambda name: (root / name).read_text()  # noqa: E731
        for name in PLAIN:
            if (root / name).exists():
                s.values[name] = read(name).strip()
        if (root / "trace_clock").exists():
            s.values["trace_clock"] = clock(read("trace_clock"))
        s.values["buffer_size_kb"] = buffer_kb(read("buffer_size_kb"))
        cpus = sorted((root / "per_cpu").glob("cpu*/buffer_size_kb"))
        sizes = {str(p.relative_to(root)): buffer_kb(p.read_text()) for p in cpus}
        if len(set(sizes.values())) > 1:
            s.values.update(sizes)  # per-CPU sizes that differ: each written back
        for opt in sorted((root / "options").glob("*")):
            s.values[str(opt.relative_to(root))] = opt.read_text().strip()
        for event in events:
            system, _, name = event.partition(":")
            f = root / "events" / system / name / "filter"
            if f.exists():
                s.values[str(f.relative_to(root))] = f.read_text().strip()
        s.enabled_events = read("set_event").split()
        for name in PID_LISTS:
            if (root / name).exists():
                s.pids[name] = read(name).split()
        return s

    def restore(self) -> list[str]:
        """Write the saved state back; the files that could not be written, for a warning."""
        failed = []
        # Buffer sizes after the rest: tracing is off again (if it was) before
        # the kernel reallocates the buffers.
        for name, value in sorted(self.values.items(), key=lambda kv: "buffer_size_kb" in kv[0]):
            try:
                if _current(self.root / name, name) == value:
                    continue
                (self.root / name).write_text(_to_write(name, value) + "\n")
            except OSError:
                failed.append(name)
        for name, pids in self.pids.items():
            try:
                if (self.root / name).read_text().split() == pids:
                    continue
                # O_TRUNC empties the list; one write sets it again.
                with open(self.root / name, "w") as f:
                    if pids:
                        f.write(" ".join(pids) + "\n")
            except OSError:
                failed.append(name)
        # Opening set_event for writing (O_TRUNC) disables every event; each line written
        # on the same open file enables one again. tracefs refuses O_APPEND here (EINVAL).
        try:
            if sorted((self.root / "set_event").read_text().split()) != sorted(self.enabled_events):
                with open(self.root / "set_event", "w") as f:
                    for event in self.enabled_events:
                        f.write(event + "\n")
                        f.flush()
        except OSError:
            failed.append("set_event")
        return failed


def _current(path: Path, name: str) -> str:
    text = path.read_text()
    if name == "trace_clock":
        return clock(text)
    if name.endswith("buffer_size_kb"):
        return buffer_kb(text)
    return text.strip()


def _to_write(name: str, value: str) -> str:
    # An event filter reads `none` when there is none; writing 0 clears one.
    if name.endswith("/filter") and value == "none":
        return "0"
    return value
