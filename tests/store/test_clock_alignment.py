"""A trace.dat and blktrace files in one store: the offset between their clocks, measured
on the requests both recorded, applied, stated, or refused with the reason."""

from __future__ import annotations

import duckdb

from advisor.store import ingest
from tests.conftest import SAMPLES

# block_rq_issue against blktrace's D of the same request (device, sector, size, order):
# the cross-layer join the README's golden query makes.
PAIRED = """
WITH tp AS (SELECT ts, dev, sector, nr_sector, row_number() OVER (PARTITION BY dev, sector, nr_sector ORDER BY ts) AS k
            FROM block_rq_issue WHERE nr_sector > 0),
     bt AS (SELECT ts, (major << 20) | minor AS dev, sector, nr_sectors,
                   row_number() OVER (PARTITION BY dev, sector, nr_sectors ORDER BY ts) AS k
            FROM blk_events WHERE action = 'D' AND bytes > 0)
SELECT count(*), median(tp.ts - bt.ts), min(bt.ts) FROM tp JOIN bt
  ON tp.dev = bt.dev AND tp.sector = bt.sector AND tp.nr_sector = bt.nr_sectors AND tp.k = bt.k
"""


def _store(tmp_path, *names):
    store = tmp_path / "s.duckdb"
    ingest([SAMPLES / n for n in names], store)
    con = duckdb.connect(str(store), read_only=True)
    return con, dict(con.execute("SELECT key, value FROM trace_info").fetchall())


def test_same_clock_needs_no_correction(tmp_path):
    """blk-ext4-fsync: trace-cmd -C mono and blktrace, recorded together."""
    con, info = _store(tmp_path, "blk-ext4-fsync", "blk-ext4-fsync.dat")
    assert info["clock"] == "mono" and info["blktrace_clock"].startswith("mono")
    assert info["blktrace_clock_alignment"].startswith("same clock (mono)")
    assert info["blktrace_clock_offset_applied_ns"] == "0" and int(info["blktrace_clock_matched_requests"]) == 1910
    assert 0 < int(info["blktrace_clock_offset_ns"]) < 10_000  # the tracepoint fires ~1 us after blktrace's D
    n, median, _ = con.execute(PAIRED).fetchone()
    assert n > 1800 and abs(median) < 10_000


def test_offset_found_and_applied(tmp_path):
    """The blkparse text of the same run counts time from its first record: 74.99 s behind
    the trace.dat. The offset is found on the requests, applied, and the golden join is
    then right to the microsecond: the first record lands where the binary files put it."""
    con, info = _store(tmp_path, "blk-ext4-fsync.blkparse.txt", "blk-ext4-fsync.dat")
    assert info["blktrace_clock_alignment"].startswith("applied:") and "over 1,910 requests" in info["blktrace_clock_alignment"]
    applied = int(info["blktrace_clock_offset_applied_ns"])
    n, median, first = con.execute(PAIRED).fetchone()
    assert n > 1800 and abs(median) < 1_000
    binary_con, _ = _store(tmp_path / "b", "blk-ext4-fsync")
    truth = binary_con.execute("SELECT min(ts) FROM blk_events").fetchone()[0]
    assert abs(con.execute("SELECT min(ts) FROM blk_events").fetchone()[0] - truth) < 5_000
    assert abs(applied - truth) < 5_000
    # io_requests times moved with them.
    assert con.execute("SELECT min(q_ts) FROM io_requests").fetchone()[0] >= applied


def test_refused_when_the_requests_do_not_match(tmp_path):
    """A trace.dat next to the blktrace of another run: no offset is invented."""
    _, info = _store(tmp_path, "blk-dm-split-remap.vda", "blk-ext4-fsync.dat")
    assert info["blktrace_clock_alignment"].startswith("refused:")
    assert "blktrace_clock_offset_applied_ns" not in info


def test_default_clock_capture_aligned(tmp_path):
    """blk-clock-global: trace-cmd without -C (this 6.1 VM's default trace clock is
    `global`) next to blktrace, one run. The layers are 35.55 ms apart; once the offset
    is applied the same requests line up to the microsecond."""
    con, info = _store(tmp_path, "blk-clock-global", "blk-clock-global.dat")
    assert info["clock"] == "global"
    assert info["blktrace_clock_alignment"].startswith("applied:")
    applied = int(info["blktrace_clock_offset_applied_ns"])
    assert -36_000_000 < applied < -35_000_000
    assert int(info["blktrace_clock_offset_p90_ns"]) - int(info["blktrace_clock_offset_p10_ns"]) < 10_000
    n, median, _ = con.execute(PAIRED).fetchone()
    assert n == int(info["blktrace_clock_matched_requests"]) > 30 and abs(median) < 1_000
    # Without the correction the same join is 35 ms off.
    raw = con.execute("SELECT median(i.ts - e.ts) FROM block_rq_issue i JOIN raw.blk_events e"
                      " ON e.sector = i.sector AND (e.action & 65279) = 7 AND e.bytes = i.nr_sector * 512"
                      " WHERE i.nr_sector > 0").fetchone()[0]
    assert abs(raw - applied) < 10_000


def test_device_span_on_the_aligned_clock(tmp_path):
    """blk_devices' first/last record times move with the other blktrace times: on
    blk-clock-global (offset -35.55 ms) they equal the aligned blk_events' min/max, and
    the stored raw values are blktrace's own clock, the offset away."""
    con, info = _store(tmp_path, "blk-clock-global", "blk-clock-global.dat")
    applied = int(info["blktrace_clock_offset_applied_ns"])
    assert -36_000_000 < applied < -35_000_000
    devices = con.execute("SELECT dev, first_ts, last_ts FROM blk_devices").fetchall()
    spans = con.execute("SELECT dev, min(ts), max(ts) FROM blk_events GROUP BY dev ORDER BY dev").fetchall()
    assert devices == spans and len(devices) == 1
    raw = con.execute("SELECT first_ts, last_ts FROM raw.blk_devices").fetchone()
    assert (raw[0] + applied, raw[1] + applied) == devices[0][1:]
    assert raw[0] == int(info["blktrace_first_ts"])


def test_capture_run_needs_no_correction(tmp_path):
    """blk-capture-run: `advisor capture --for all --device /dev/vda --run` recorded both
    layers (trace-cmd -C mono and blktrace, started together) on a 6.1 VM. Ingested into
    one store, the requests both saw are a few microseconds apart (tracer latency): no
    correction is applied, and the golden join lines up as recorded."""
    con, info = _store(tmp_path, "blk-capture-run", "blk-capture-run.dat")
    assert info["clock"] == "mono"
    assert info["blktrace_clock_alignment"].startswith("same clock (mono): ")
    assert info["blktrace_clock_offset_applied_ns"] == "0"
    n = int(info["blktrace_clock_matched_requests"])
    assert n >= 30
    offset, p10, p90 = (int(info[f"blktrace_clock_offset{k}_ns"]) for k in ("", "_p10", "_p90"))
    assert abs(offset) < 5_000 and -5_000 < p10 <= offset <= p90 < 5_000
    paired, median, _ = con.execute(PAIRED).fetchone()
    assert paired >= n and abs(median) < 5_000
    # Nothing shifted: the views show blktrace's own times.
    assert con.execute("SELECT min(ts) FROM blk_events").fetchone()[0] == int(info["blktrace_first_ts"])
