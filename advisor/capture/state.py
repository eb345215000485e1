"""Save and restore the tracing state that `advisor capture --run` touches.

trace-cmd record restores what it changed when it exits normally; when it is
killed, events stay enabled and tracing stays on. So the state is saved before
the run and written back afterwards, whatever happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class TracingState:
    root: Path
    tracing_on: str
    buffer_size_kb: str
    enabled_events: list[str]

    @classmethod
    def save(cls, root: Path) -> "TracingState":
        read = lambda name: (root / name).read_text().strip()  # noqa: E731
        return cls(root, read("tracing_on"), read("buffer_size_kb"), read("set_event").split())

    def restore(self) -> list[str]:
        """Write the saved state back; the files that could not be written, for a warning."""
        failed = []
        for name, value in (("tracing_on", self.tracing_on), ("buffer_size_kb", self.buffer_size_kb)):
            try:
                (self.root / name).write_text(value + "\n")
            except OSError:
                failed.append(name)
        # Opening set_event for writing (O_TRUNC) disables every event; each line written
        # on the same open file enables one again. tracefs refuses O_APPEND here (EINVAL).
        try:
            with open(self.root / "set_event", "w") as f:
                for event in self.enabled_events:
                    f.write(event + "\n")
                    f.flush()
        except OSError:
            failed.append("set_event")
        return failed
