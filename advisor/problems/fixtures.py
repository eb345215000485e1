"""Threshold fixtures: tiny trace snippets in `trace-cmd report -R` text form.

Each problem's fixtures.py builds snippets whose values sit exactly at (or just off)
one of its rule's thresholds, and lists them as Cases; everything else about them
(field names, line layout) is what trace-cmd prints for these events, so they go
through the real text parser and store. The test suite runs every Case: at the
threshold the signature holds, just below it that one condition fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

MS = 1_000_000


class Snippet:
    def __init__(self):
        self.lines: list[tuple[int, str]] = []

    def event(self, ts_ns: int, comm: str, pid: int, event: str, /, **fields) -> "Snippet":
        body = " ".join(f"{k}={v}" for k, v in fields.items())
        line = f"{comm:>16}-{pid:<5} [000] {ts_ns // 10**9:>5}.{ts_ns % 10**9:09d}: {event + ':':<22} {body}"
        self.lines.append((ts_ns, line))
        return self

    def syscall(self, start: int, end: int, comm: str, pid: int, name: str, nr: int, **fields) -> "Snippet":
        self.event(start, comm, pid, f"sys_enter_{name}", __syscall_nr=nr, **fields)
        return self.event(end, comm, pid, f"sys_exit_{name}", __syscall_nr=nr, ret=0)

    def lost(self, ts_ns: int, count: int) -> "Snippet":
        """A lost-events marker before the events at `ts_ns`, as `trace-cmd report` prints it."""
        self.lines.append((ts_ns, f"CPU:0 [LOST {count} EVENTS]"))
        return self

    def write(self, path: Path) -> Path:
        path.write_text("cpus=1\n" + "\n".join(line for _, line in sorted(self.lines, key=lambda x: x[0])) + "\n")
        return path


T0 = 100 * 10**9


@dataclass(frozen=True)
class Case:
    rule: str
    threshold: str
    bad: str  # a kernel in the affected range
    good: str  # the first fixed kernel
    at: Callable[[], Snippet]
    below: Callable[[], Snippet]
    # The threshold's value for this case, when not the rule file's: a count threshold of 1
    # cannot be undercut without removing the events the other conditions measure (0 stalls
    # have no p99), so it is also exercised alone at a raised value.
    value: float | None = None
    # Conditions on other thresholds that must fail too below (None: every other one holds).
    coupled: tuple[str, ...] = ()
    # A threshold of the rule's code_path (the code before the fix shown running): at it,
    # a kernel whose release has the fix is found affected; below it, it is not.
    code_path: bool = False
