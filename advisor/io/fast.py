"""`advisor io` straight from blktrace files, with no store.

The parser gathers the summary's figures while it merges the records
(parsers/src/blktrace/summary) and hands over the rows the SQL of
`advisor/io/summary.py` would read from a store; `compose` makes the same
summary of them. Used when every input is binary blktrace data: a store is
only built for a trace.dat beside it, for blkparse text, or when the capture
holds more than the parser keeps in memory for it (about 160 MiB of phase values,
requests and seeks: some 10 M records).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from advisor import parsers
from advisor.errors import TraceFormatError, UsageError
from advisor.io.summary import compose

#: How often the wait for the parser returns to Python (Ctrl-C, progress).
_POLL_S = 0.05


def only_blktrace(paths: list[Path]) -> bool:
    """Every input is binary blktrace data (per-CPU files, a `blkparse -d` file or
    stdin), so the parser alone can answer."""
    return bool(paths) and all(str(p) == "-" or parsers.is_blktrace(p) for p in paths)


def blktrace_summary(
    paths: list[Path],
    device: str | None,
    btt_compat: bool,
    progress: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    job=None,
) -> dict | None:
    """The summary `io_summary` gives for a store of these inputs; None when the
    capture is past what the parser holds for it (read it into a store instead).
    Damage and records lost to sequence gaps are said through `warn`. `job`: the
    parser already started for these arguments (advisor/cli/head_start.py)."""
    if job is None:
        job = parsers.blktrace_io_summary(paths, device, btt_compat)
    while (done := job.wait(_POLL_S)) is None:
        if progress is not None:
            progress(job.progress(), job.total_bytes)
    report = done["report"]
    if not report["events"]:
        # Nothing readable at all: an error, as ingest says it (advisor/store/ingest.py).
        label = "stdin" if [str(p) for p in paths] == ["-"] else ", ".join(Path(p).name for p in paths)
        raise TraceFormatError(report["damage"][0]) if report["damage"] else parsers.no_blktrace_records(label)
    if warn is not None:
        for line in _quality(report):
            warn(line)
    if done.get("devices") is not None:
        devices = done["devices"]
        raise UsageError(f"no device {device.replace(':', ',')} in this capture (devices: {', '.join(devices) or 'none'})")
    if done["rows"] is None:
        return None
    rows = json.loads(done["rows"])
    rows["clocks"] = []  # no trace.dat to align with
    return compose(rows, btt_compat)


def _quality(report: dict) -> list[str]:
    """What an ingest of the same input would warn about: damage, and records
    lost where blktrace's sequence numbers jump."""
    out = []
    if report["damaged"]:
        out.append(f"{report['damage'][0]}: damaged; results cover what could be read")
    return out + lost_records(report["stats"])


def lost_records(stats: list[tuple]) -> list[str]:
    """A warning for the records blktrace lost, from the parser's statistics
    (name, cpu, severity, count, description), as a report or `parse_stats` has them."""
    lost = [s for s in stats if s[0].startswith("blk_lost_events") and s[3] > 0]
    if not lost:
        return []
    where = ", ".join(f"{s[0].split(':', 1)[-1]} cpu {s[1]}: {s[3]:,}" for s in lost)
    n = sum(s[3] for s in lost)
    return [f"{n:,} record{'s' if n != 1 else ''} lost (sequence gaps: {where}); the figures undercount them"]
