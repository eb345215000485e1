"""A capture recorded with nothing filtered (sample_traces/capture/41, the fit run): ext4 on
a loop device throttled to 8 MiB/s, its image and the trace file on the host's root ext4
(254:0), whose pages, requests and flusher work show too. The replay models the loop
device: the host's pages are left out, the device's rate is the one the flusher's work
drained at (the throttle holds the flusher itself), and the block device's own inode
(ext4's metadata buffers) does not decide the files' folio size."""

from __future__ import annotations

import numpy as np

from advisor.replay import drain
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

UNFILTERED = "sync-fsmark-ext4-unfiltered-run1-v7-zstd.dat"
THROTTLE = 8 * 1024 * 1024  # blkio.throttle.write_bps_device of the loop device
LOOP_BDEV_INODE = 7 << 20  # /dev/loop0's own inode: its dev_t, 7340032


def test_the_replay_models_the_loop_device_only(store_of):
    with open_store(store_of(UNFILTERED)) as con:
        views = attach(con)
        host = con.execute("SELECT count(*) FROM dirtying WHERE bdi = '254:0'").fetchone()[0]
        host_works = con.execute("SELECT count(*) FROM writeback_works WHERE bdi = '254:0'").fetchone()[0]
        assert host > 0 and host_works > 0
        w = from_store(con, UNFILTERED, views=views)
        assert len(w.dirty_ts) == con.execute("SELECT count(*) FROM dirtying WHERE bdi = '7:0'").fetchone()[0]
        assert any(a.startswith(f"{host:,} dirtying events of") and "bdi 254:0 left out" in a for a in w.assumptions)


def test_the_device_drains_at_the_throttles_rate(store_of):
    """Each ~575 KiB request takes 0.4 ms in the device (1.1 GB/s over its busy time),
    while the throttle lets 8 MiB/s through: the flusher writes 1,024 8 KiB files a second."""
    with open_store(store_of(UNFILTERED)) as con:
        w = from_store(con, UNFILTERED, views=attach(con))
        assert 0.9 * THROTTLE <= w.device.bandwidth <= 1.1 * THROTTLE, w.device.bandwidth
        assert "while the flusher's writeback work ran" in w.device.source and "paced upstream of the device" in w.device.source


def test_a_device_busy_through_the_flushers_work_is_its_own_limit():
    """The same measure declines where the device, not something above it, set the pace:
    one flusher work of a second, 40 inodes written in pairs 10 us apart, 100 requests."""
    import duckdb

    ms = 1_000_000
    con = duckdb.connect()
    con.execute(f"CREATE TABLE writeback_works AS SELECT 0::BIGINT AS start_ts, {1000 * ms}::BIGINT AS end_ts")
    con.execute(f"CREATE TABLE inode_writeback AS SELECT 1 AS pid, 'written' AS kind, "
                f"(i // 2) * {50 * ms} + (i % 2) * 10000 AS ts FROM range(40) t(i)")

    class Views:
        def met(self, name):
            return True

    start = np.arange(0, 1000 * ms, 10 * ms, dtype=np.int64)
    nbytes = np.full(len(start), 512e3)
    assert drain._paced_upstream(con, Views(), start, start + 9 * ms, nbytes) is None  # busy 90%
    n, rate, what = drain._paced_upstream(con, Views(), start, start + ms, nbytes)  # idle 90%
    assert n == 100 and abs(rate - 100 * 512e3 / (1.0 - 40 * 10e-6)) < 1 and "paced upstream" in what


def test_metadata_buffers_do_not_make_every_folio_one_page(store_of):
    """ext4 dirties its metadata buffers in the loop device's own inode, one page each and
    mostly next to each other (1,595 of 1,598 neighbours); the 20,000 files are dirtied
    once each, 8 KiB folios, which the data requests (7.4 KiB per dirtying) show."""
    with open_store(store_of(UNFILTERED)) as con:
        w = from_store(con, UNFILTERED, views=attach(con))
        assert w.dirty_pages is not None and w.folio_bytes == 8192
        buffers = w.dirty_ino == LOOP_BDEV_INODE
        assert buffers.sum() > 1000 and (w.dirty_pages[buffers] == 1).all()
        assert (w.dirty_pages[~buffers] == 2).mean() > 0.99
