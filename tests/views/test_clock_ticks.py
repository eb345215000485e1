"""A capture whose timestamps are clock ticks, not nanoseconds.

`trace-cmd record -C x86-tsc` stores TSC cycles and `-C counter` a bare sequence
number (trace-cmd report prints "[001]32915178516790:"); the parser keeps them as
they are and says so in trace_info (ts_unit "clock ticks"). Every duration, rate
and time window built on them would be off by the TSC frequency or meaningless, so
the views built from trace events are not measurable (except to rule queries that
need only the order of events, or a ratio of durations in x86-tsc cycles: see
tests/problems/test_queries_in_ticks.py), analyze shows the span in ticks, and replay
refuses with the reason. Parity of such captures with trace-cmd
is checked by tests/parity (its report line accepts the bare count).

The store is a sample's, with its clock metadata set as the parser sets it for an
x86-tsc capture: the event rows are the same either way.
"""

from __future__ import annotations

import json
import shutil

import duckdb

from advisor.store import open_store, store_for
from advisor.views import attach
from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli, one_file_store, one_line_error

SAMPLE = "hostile-names-ext4-v7-zstd.dat"


def _ticks_store(tmp_path, sample: str = SAMPLE):
    out = one_file_store(SAMPLES / sample, tmp_path / "tsc.duckdb")
    with duckdb.connect(str(out)) as con:
        con.execute("UPDATE trace_info SET value = 'clock ticks' WHERE key = 'ts_unit'")
        con.execute("UPDATE trace_info SET value = 'x86-tsc' WHERE key = 'clock'")
    return out


def test_views_from_events_are_not_measurable_and_say_why(tmp_path):
    store = _ticks_store(tmp_path)
    with duckdb.connect(str(store), read_only=True) as con:
        views = attach(con)
        assert views.present.ticks_clock == "x86-tsc"
        for need in ("dirtying.index", "page_waits", "block_requests", "fsync_ops.dur_ns"):
            assert not views.met(need)
            (unmet,) = views.unmet([need])
            assert "x86-tsc clock ticks, not nanoseconds" in unmet.why
            assert unmet.record == []  # the events are there: the clock is the remedy


def test_analyze_shows_ticks_and_measures_no_duration(tmp_path):
    store = _ticks_store(tmp_path)
    r = run_cli("analyze", str(store), "--json")
    assert r.code in (0, 1), r.err
    doc = json.loads(r.out)
    c = doc["capture"]
    assert c["ts_unit"] == "clock ticks" and c["span_seconds"] is None
    assert c["span_ticks"] == c["last_ts"] - c["first_ts"] > 0
    for f in doc["findings"]:
        if f["verdict"] not in ("not-applicable", "insufficient-data"):  # decided on what was measured
            assert any(c["holds"] is not None for c in f["signature"] + f["pattern"]), f["rule"]
        timed = [n for n, unit in f["metric_units"].items() if unit in ("ms", "s", "seconds")]
        assert all(f["metrics"][n] is None for n in timed), f["rule"]
    # Counts need only the order of events (tests/problems/test_queries_in_ticks.py).
    sync = next(f for f in doc["findings"] if f["rule"] == "sync-flusher-stall")
    assert sync["metrics"]["sync_count"] == 2 and sync["metrics"]["sync_seconds"] is None
    text = run_cli("analyze", str(store))
    assert "clock ticks" in text.out and "no duration can be measured" in text.out


def test_replay_refuses_with_the_clock_as_reason(tmp_path):
    r = run_cli("replay", str(_ticks_store(tmp_path)))
    assert r.code == 2
    assert "x86-tsc clock ticks, not nanoseconds" in one_line_error(r)


def test_the_same_capture_in_nanoseconds_is_measured(tmp_path):
    """The control: the unchanged store measures what the ticks store cannot."""
    out = tmp_path / "ns.duckdb"
    shutil.copy(_ticks_store(tmp_path), out)
    with duckdb.connect(str(out)) as con:
        con.execute("UPDATE trace_info SET value = 'ns' WHERE key = 'ts_unit'")
        con.execute("UPDATE trace_info SET value = 'local' WHERE key = 'clock'")
        views = attach(con)
        assert views.present.ticks_clock is None
        assert views.met("dirtying.index") and views.met("page_waits")


def test_io_refuses_latencies_in_ticks(tmp_path):
    r = run_cli("io", str(_ticks_store(tmp_path)))
    assert "no latency can be measured" in one_line_error(r)


def test_capture_views_say_the_timestamps_are_ticks(tmp_path):
    r = run_cli("sql", str(_ticks_store(tmp_path)), "select lacks from capture_views where view = 'page_waits'", "--format", "csv")
    assert r.code == 0, r.err
    assert "x86-tsc clock ticks, not nanoseconds" in r.out


def test_an_uptime_clock_capture_is_in_ticks():
    """`trace-cmd record -C uptime` (sample 33): jiffies as clock_t, hundredths of a second,
    which trace-cmd report prints as if nanoseconds (0.008405004). 40 fsyncs, and no
    latency is measured from them: an fsync's enter and exit are 0-1 ticks apart."""
    r = run_cli("analyze", str(SAMPLES / "clock-uptime-ext4-v7-zstd.dat"), "--json")
    assert r.code in (0, 1), r.err
    c = json.loads(r.out)["capture"]
    assert (c["clock"], c["ts_unit"], c["span_seconds"]) == ("uptime", "clock ticks", None)
    assert 0 < c["span_ticks"] < 1000
    with open_store(store_for([SAMPLES / "clock-uptime-ext4-v7-zstd.dat"]).store) as con:
        views = attach(con)
        assert con.execute("SELECT count(*) FROM fsync_ops").fetchone()[0] == 40
        assert views.present.ticks_clock == "uptime" and not views.met("fsync_ops.dur_ns")


def test_a_tick_clock_asks_for_no_events_it_has(tmp_path):
    """What a clock in ticks costs is not fixed by recording events: no empty recipe. The
    btrfs fsync capture has every event its rule reads."""
    store = str(_ticks_store(tmp_path, "fsync-reclaim-btrfs-v7-zstd.dat"))
    doc = json.loads(run_cli("analyze", store, "--json").out)
    lacking = [f for f in doc["findings"] if f["unmeasured"] and not f["missing_events"]]
    assert lacking
    for f in lacking:
        assert f["capture_command"] is None and "record  " not in f["message"]
        assert "recording more events would not add them" in f["message"]
    r = run_cli("analyze", store)
    assert "(record  to" not in r.out and "record them with: \n" not in r.out + "\n"
    r = run_cli("replay", store)
    assert r.code == 2 and "cannot be replayed on a clock in ticks" in r.err and "no page-dirtying events" not in r.err
