"""Parity with trace-cmd: every event of every sample trace.dat, every field,
against `trace-cmd report -R -t` on the same file."""

from __future__ import annotations

import duckdb
import pytest

from tests.conftest import SAMPLES, need_trace_cmd, samples
from tests.parity.tracecmd_report import compare, compare_flags, stack_lines

# Debian's trace-cmd is built without zlib: it cannot read the zlib sample
# (see test_zlib_equals_zstd for that one).
READABLE = [m["file"] for m in samples("trace.dat") if m["compression"] != "zlib"]


@pytest.mark.parametrize("name", READABLE)
def test_every_event_and_field_matches_trace_cmd(name, store_of):
    need_trace_cmd()
    res = compare(store_of(name), SAMPLES / name)
    assert res.mismatches == [], "\n".join(res.mismatches[:30])
    assert res.events == res.lines > 0
    assert res.values > res.events  # fields were really compared
    assert not res.unchecked, dict(res.unchecked)
    with duckdb.connect(str(store_of(name)), read_only=True) as con:
        ours = dict(con.execute("SELECT event, count(*) FROM events GROUP BY 1").fetchall())
        lost = con.execute("SELECT count(*) FROM lost_events").fetchone()[0] if res.lost_lines else 0
    assert ours == dict(res.report_counts)
    assert lost == len(res.lost_lines)


@pytest.mark.parametrize("name", READABLE)
def test_irq_flags_match_trace_cmd(name, store_of):
    need_trace_cmd()
    res = compare_flags(store_of(name), SAMPLES / name)
    assert res.mismatches == [], "\n".join(res.mismatches[:30])
    assert res.events > 0


def test_lost_events_are_counted_per_cpu(store_of):
    """The capture made with a tiny buffer: trace-cmd prints three
    'EVENTS DROPPED' markers on CPU 1 summing to 53347."""
    m = next(m for m in samples("trace.dat") if m["file"].startswith("lost-events"))
    with duckdb.connect(str(store_of(m["file"])), read_only=True) as con:
        rows = con.execute("SELECT cpu, sum(count), count(*) FROM lost_events GROUP BY 1").fetchall()
        stat = con.execute("SELECT cpu, count FROM parse_stats WHERE name = 'lost_events' AND count > 0").fetchall()
        kernel = con.execute("SELECT sum(count) FROM parse_stats WHERE name = 'kernel_overrun'").fetchone()[0]
    assert rows == [(1, m["lost_events"], 3)]
    assert stat == [(1, m["lost_events"])]
    assert kernel == m["measurements"]["cpu_stats_overrun_sum"]


CLEAN = [m["file"] for m in samples("trace.dat") if m["lost_events"] == 0 and not m.get("cpu_stats_overrun")]


@pytest.mark.parametrize("name", CLEAN)
def test_a_whole_capture_reports_no_data_loss(name, store_of):
    """Every byte of a capture the kernel lost nothing in is some CPU's data, a
    table or page padding: a v6 instance's CPU table between two buffers' pages
    once read as a page of unread CPU data."""
    with duckdb.connect(str(store_of(name)), read_only=True) as con:
        loss = con.execute("SELECT name, cpu, count FROM parse_stats WHERE severity = 'data_loss' AND count > 0").fetchall()
    assert loss == []


def test_kernel_stacks_hold_every_caller_trace_cmd_prints(store_of):
    """`trace-cmd record -T`: ftrace:kernel_stack declares `unsigned long caller[8]` but
    holds `size` callers. Every stack is whole, as `trace-cmd report` prints it, those
    shorter than 8 (size=4 here, once stored NULL and the capture flagged damaged) and
    those longer (up to 28, once cut at 8)."""
    need_trace_cmd()
    name = "stacktrace-ext4-v7-zstd.dat"
    with duckdb.connect(str(store_of(name)), read_only=True) as con:
        rows = con.execute("SELECT size, caller FROM kernel_stack ORDER BY id").fetchall()
        damage = con.execute("SELECT count(*) FROM parse_stats WHERE severity <> 'info' AND count > 0").fetchone()[0]
    assert [c for _, c in rows] == stack_lines(SAMPLES / name)
    assert all(len(c) == size for size, c in rows)
    assert min(s for s, _ in rows) < 8 < max(s for s, _ in rows)
    assert damage == 0
