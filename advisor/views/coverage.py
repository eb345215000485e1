"""Which part of the capture has every CPU's events.

A ring buffer in overwrite mode (tracefs' default, what `cat trace` or `trace-cmd
extract` reads after an incident) keeps each CPU's newest events, so each CPU's buffer
begins at a different time. A busy CPU's may hold only the last moments. On the
2-CPU btrfs fsync capture read from tracefs' default 1408 KB buffers (859,302 events
overwritten), CPU 0's events begin at 4756.611 s and CPU 1's at 4758.075 s. For the
first 1.46 s of its 2.06 s, the capture has only CPU 0's events. There, an fsync's
enter and exit may both be on CPU 0 while the writes it flushed and the completions it
waited for ran on CPU 1 and are gone.

trace-cmd flags such a buffer's first page as following dropped events (`lost_events`
markers). The tracefs text gives only the total (its header's entries-written minus
entries-in-buffer). Then a CPU that begins later than the others may have lost its
beginning if its buffer is as full as theirs; with far fewer events it was only idle.

A CPU with no event at all was idle or offline, or was left out: `trace-cmd record -M 1`
records CPU 0 only, and `trace-cmd report --cpu 0` prints only its events under a
`cpus=2` header. The capture cannot tell which, so it is said, not judged.

Markers in the middle of a CPU's stream (a reader that fell behind) are not counted
here: their gap is between two recorded events of that CPU, and syscall spans across
one are already left open (advisor.views.spans).
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.store.ddl import has_table


@dataclass(frozen=True)
class LateCpu:
    cpu: int
    first_ts: int  # its first recorded event
    lost: int | None  # events its buffer dropped before it; None: the capture gives only a total


@dataclass(frozen=True)
class CpuCoverage:
    first_ts: int  # the capture's first event
    last_ts: int  # the capture's last event
    late: tuple[LateCpu, ...]  # CPUs that lost their buffer's beginning and begin after first_ts
    certain: bool  # markers say the late CPUs lost events (else: an overwritten total, and the CPUs began late)

    @property
    def complete_from_ts(self) -> int:
        """From here to the end, every CPU's events are in the capture."""
        return max(c.first_ts for c in self.late)

    def as_dict(self) -> dict:
        return {
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "complete_from_ts": self.complete_from_ts,
            "certain": self.certain,
            "late_cpus": [{"cpu": c.cpu, "first_ts": c.first_ts, "lost_before": c.lost} for c in self.late],
        }

    def describe(self, ts_unit: str = "ns") -> str:
        """One sentence: which CPUs begin late, and what the capture holds before that."""
        return describe(self.as_dict(), ts_unit)


def describe(d: dict, ts_unit: str = "ns") -> str:
    """The sentence for `CpuCoverage.as_dict()` (as analyze's JSON carries it)."""
    first_ts, last_ts = d["first_ts"], d["last_ts"]

    def at(ts: int) -> str:
        return f"+{(ts - first_ts) / 1e9:.3f} s" if ts_unit == "ns" else f"{ts - first_ts:,} ticks in"

    late = d["late_cpus"]
    cpus = ", ".join(
        f"CPU {c['cpu']} at {at(c['first_ts'])}" + (f" ({c['lost_before']:,} events dropped before it)" if c["lost_before"] else "")
        for c in late)
    whole = at(d["complete_from_ts"])
    span = (f"the last {(last_ts - d['complete_from_ts']) / 1e9:.3f} s of {(last_ts - first_ts) / 1e9:.3f} s"
            if ts_unit == "ns" else f"the last {last_ts - d['complete_from_ts']:,} of {last_ts - first_ts:,} ticks")
    if d["certain"]:
        return (f"the kernel overwrote the oldest events of some CPUs' buffers, which now begin late: {cpus}. "
                f"Before {whole} those CPUs' events are missing; every CPU is recorded for {span}")
    return (f"the buffers were overwritten, and some CPUs' events begin late: {cpus}. "
            f"Before {whole} those CPUs' events may be missing; every CPU is recorded for {span}")


def lost_facts(con) -> dict:
    """How many events the capture lost: `lost_events`, the same total as `advisor ingest`
    (counts the kernel stored in ftrace page headers and blktrace sequence gaps, or a
    tracefs text header's overwritten entries when more); `lost_gaps_uncounted`, pages
    flagged as following dropped events with no room left for their number (the kernel
    stores it only when it fits: RB_MISSED_STORED), gaps of unknown size; and
    `kernel_overwritten`, the per-CPU statistics trace-cmd saves, which count every
    overwritten event, those of such gaps too, and in a buffer read after it wrapped
    (`trace-cmd extract`) also those older than the capture's first event. The last two
    are not added to the total; they say where it falls short: 2,347 counted, 32 gaps
    uncounted, 31,606 overwritten."""
    if not has_table(con, "parse_stats", "main"):
        return {"lost_events": 0, "lost_gaps_uncounted": 0, "kernel_overwritten": 0}
    lost, uncounted, overwritten = con.execute(
        "SELECT greatest(coalesce(sum(count) FILTER (WHERE name = 'lost_events' OR name LIKE 'blk_lost_events%'), 0), "
        "coalesce(sum(count) FILTER (WHERE name = 'overwritten_entries'), 0)), "
        "coalesce(sum(count) FILTER (WHERE name = 'lost_events_uncounted'), 0), "
        "coalesce(sum(count) FILTER (WHERE name IN ('kernel_overrun', 'kernel_commit_overrun', 'kernel_dropped_events')), 0) "
        "FROM parse_stats"
    ).fetchone()
    return {"lost_events": int(lost), "lost_gaps_uncounted": int(uncounted), "kernel_overwritten": int(overwritten)}


def cpu_coverage(con) -> CpuCoverage | None:
    """The CPUs whose buffer lost its beginning and begins after the capture's first
    event, or None when no CPU did (no overwritten events, or all begin together)."""
    markers = _first_markers(con)
    overwritten = con.execute(
        "SELECT coalesce(sum(count), 0) FROM parse_stats WHERE name = 'overwritten_entries'").fetchone()[0]
    if not markers and not overwritten:
        return None
    if not has_table(con, "events"):
        return None
    per_cpu = con.execute("SELECT cpu, min(ts), max(ts), count(*) FROM events GROUP BY cpu").fetchall()
    starts = {cpu: lo for cpu, lo, _, _ in per_cpu if cpu is not None and lo is not None}
    if not starts:
        return None
    first = int(min(lo for _, lo, _, _ in per_cpu if lo is not None))
    last = int(max(hi for _, _, hi, _ in per_cpu if hi is not None))
    if markers:
        # A marker at or before a CPU's first event: its buffer's start was overwritten.
        late = [LateCpu(cpu, int(starts[cpu]), int(n) if n is not None else None)
                for cpu, (ts, n) in markers.items() if cpu in starts and ts <= starts[cpu] and starts[cpu] > first]
    else:
        # Only a full buffer was overwritten. Buffers are the same size per CPU, so a full
        # one holds about as many events as the fullest (within the spread of event
        # sizes, here taken as 2x); a CPU with fewer began late because it was idle.
        counts = {cpu: n for cpu, _, _, n in per_cpu if cpu is not None}
        fullest = max(counts.values())
        late = [LateCpu(int(cpu), int(ts), None) for cpu, ts in starts.items() if ts > first and 2 * counts[cpu] >= fullest]
    if not late:
        return None
    return CpuCoverage(first_ts=first, last_ts=last, late=tuple(sorted(late, key=lambda c: c.first_ts)), certain=bool(markers))


@dataclass(frozen=True)
class SilentCpus:
    cpus: int  # the CPUs the capture says the machine had
    silent: tuple[int, ...]  # those of them without a single event

    def as_dict(self) -> dict:
        return {"cpus": self.cpus, "silent": list(self.silent)}


def silent_cpus(con) -> SilentCpus | None:
    """The CPUs of the capture's machine (trace.dat's CPU count, a text capture's `cpus=N`
    line) of which no event was recorded, or None when every CPU has some."""
    if not has_table(con, "events"):
        return None
    row = con.execute("SELECT max(TRY_CAST(value AS INTEGER)) FROM trace_info WHERE key = 'cpus'").fetchone()
    cpus = row[0] if row else None
    if not cpus or cpus < 2:
        return None
    seen = {int(c) for (c,) in con.execute("SELECT DISTINCT cpu FROM events WHERE cpu IS NOT NULL").fetchall()}
    silent = tuple(c for c in range(cpus) if c not in seen)
    return SilentCpus(int(cpus), silent) if seen and silent else None


def describe_silent(d: dict) -> str:
    """The sentence for `SilentCpus.as_dict()`: "no event from CPU 1 of 2: ..."."""
    cpus = _ranges(d["silent"])
    return (f"no event from CPU{'s' if len(d['silent']) > 1 else ''} {cpus} of {d['cpus']}: idle, offline, or left out of "
            "the capture (trace-cmd record -M, trace-cmd report --cpu); anything that ran there is missing")


def _ranges(cpus: list[int]) -> str:
    """[1, 3, 4, 5, 9] → "1, 3-5, 9"."""
    out: list[str] = []
    start = prev = None
    for c in [*cpus, None]:
        if c is not None and prev is not None and c == prev + 1:
            prev = c
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = c
    return ", ".join(out)


def _first_markers(con) -> dict[int, tuple[int, int | None]]:
    """cpu → (ts, count) of its first lost-events marker."""
    if not has_table(con, "lost_events", "main"):
        return {}
    rows = con.execute("SELECT cpu, arg_min(ts, ts), arg_min(count, ts) FROM lost_events GROUP BY cpu").fetchall()
    return {int(cpu): (int(ts), n) for cpu, ts, n in rows}
