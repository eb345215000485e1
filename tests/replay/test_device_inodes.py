"""A capture without block events: the replay's device is measured from inodes entering
and leaving writeback (sb_mark_inode_writeback -> sb_clear_inode_writeback), not assumed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from advisor.analyze.replay import replay_store
from advisor.replay.device_inodes import _latency, _rate
from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES, samples
from tests.helpers import advisor as run_cli

NOBLOCK = "sync-fsmark-ext4-noblock-run1-v7-zstd.dat"  # the fit run: recorded without block events
BOTH = "sync-fsmark-xfs-run2-v7-zstd.dat"  # block events and inode writeback both recorded


def _manifest(name: str) -> dict:
    return next(m for m in samples() if m["file"] == name)


def test_the_device_of_a_capture_without_block_events_is_measured_not_assumed():
    r = run_cli("replay", str(SAMPLES / NOBLOCK), "--problem", "sync-flusher-stall", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    device = doc["workload"]["device"]
    assert "inode writebacks" in device["source"] and "preset" not in device["source"]
    assert any("no usable block requests" in a and "inode writebacks" in a for a in doc["workload"]["assumptions"])
    # The loop device was throttled to 8 MiB/s: data alone (ext4's journal shares the cap)
    # cannot come out faster, nor far slower while a sync keeps it backlogged.
    cap = _manifest(NOBLOCK)["device_write_cap_bytes_per_s"]
    assert 0.6 * cap <= device["bandwidth_mb_s"] * 1e6 <= 1.05 * cap


def _sync_error(con, hide: frozenset[str]) -> tuple[dict, float]:
    doc = replay_store(con, BOTH, ["sync-flusher-stall"], views=attach(con, hide=hide))
    [own] = [r for r in doc["results"] if r["own_kernel"]]
    return doc["workload"]["device"], own["own_kernel_error"]["sync_seconds"]["error"]


def test_hiding_the_block_events_keeps_the_sync_replay_close(store_of):
    with open_store(store_of(BOTH)) as con:
        recorded = {f"{s}:{e}" for s, e in con.execute("SELECT system, event FROM event_formats").fetchall()}
        block = frozenset(e for e in recorded if e.startswith("block:"))
        full_device, full_error = _sync_error(con, frozenset())
        device, error = _sync_error(con, block)
        assert "write requests" in full_device["source"] and "inode writebacks" in device["source"]
        assert abs(full_error) <= 0.25 and abs(error) <= 0.25, (full_error, error)
        # Without the completions too, the device is the stated preset.
        device, _ = _sync_error(con, block | {"writeback:sb_clear_inode_writeback"})
        assert device["source"].startswith("preset")


def test_the_rate_is_taken_while_backlogged():
    # 100 inodes of one page put under writeback at once, one completing every 10 ms.
    start = np.zeros(100, np.int64)
    end = np.arange(1, 101, dtype=np.int64) * 10_000_000
    nbytes = np.full(100, 4096.0)
    rate, how = _rate(start, end, nbytes, busy=float(end[-1]))
    assert rate == pytest.approx(409_600, rel=0.02) and "in flight" in how


def test_a_write_is_timed_from_inodes_written_alone():
    # 20 lone one-page writebacks of 1 ms, 10 ms apart, then 20 overlapping ones of 50 ms.
    lone = np.arange(20, dtype=np.int64) * 10_000_000
    piled = 300_000_000 + np.arange(20, dtype=np.int64) * 1_000_000
    start = np.concatenate((lone, piled))
    end = np.concatenate((lone + 1_000_000, piled + 50_000_000))
    nbytes = np.full(40, 4096.0)
    fixed, samples_ns, size, how = _latency(start, end, nbytes, bandwidth=1e9)
    assert len(samples_ns) == 20 and set(samples_ns) == {1_000_000}
    assert fixed == pytest.approx(1_000_000 - 4096, abs=1) and size == 4096 and "20 inodes written alone" in how
    # Without enough lone ones there is no per-write time to draw from.
    fixed, samples_ns, _, how = _latency(start[15:], end[15:], nbytes[15:], bandwidth=1e9)
    assert fixed == 0 and not len(samples_ns) and "too few" in how


DBENCH = "sync-dbench-ext4-run1-v7-zstd.dat"  # the fit run: ext4's journal commit marks and clears inodes it wrote nothing of


def test_writebacks_that_wrote_nothing_do_not_time_the_device(store_of):
    """ext4's jbd2 re-dirties delayed-allocation folios and marks and clears their inode in
    0.24 us (advisor.replay.redirty): taken as writes, those 903 episodes timed the device
    fitted without block events, and the sync replayed at 7.40 s against 11.37 s."""
    with open_store(store_of(DBENCH)) as con:
        recorded = {f"{s}:{e}" for s, e in con.execute("SELECT system, event FROM event_formats").fetchall()}
        block = frozenset(e for e in recorded if e.startswith("block:"))
        doc = replay_store(con, DBENCH, ["sync-flusher-stall"], views=attach(con, hide=block))
        [own] = [r for r in doc["results"] if r["own_kernel"]]
        source = doc["workload"]["device"]["source"]
        [empty] = [a for a in doc["workload"]["assumptions"] if "wrote nothing" in a]
        fitted = int(source.split("measured from ")[1].split()[0])
        episodes = con.execute("SELECT count(*) FROM inode_writeback WHERE kind = 'completed'").fetchone()[0]
        dropped = int(empty.split()[0].replace(",", ""))
        assert fitted <= episodes - dropped, (fitted, episodes, dropped)
        assert abs(own["own_kernel_error"]["sync_seconds"]["error"]) <= 0.25, own["own_kernel_error"]


def test_episodes_pair_each_clear_with_its_mark_and_the_pages_dirtied_before_it():
    from advisor.replay.device_inodes import episodes
    # inode 7: pages 0, 1, 1 dirtied, marked at 10, cleared at 20 and (a stray second clear) 25;
    # page 2 dirtied at 30, marked at 40, cleared at 50. Inode 8: marked at 12, never cleared.
    marked_ts, marked_ino = np.array([10, 12, 40]), np.array([7, 8, 7])
    completed_ts, completed_ino = np.array([20, 25, 50]), np.array([7, 7, 7])
    dirty_ts, dirty_ino, dirty_idx = np.array([1, 2, 3, 30]), np.array([7, 7, 7, 7]), np.array([0, 1, 1, 2])
    start, end, pages = episodes(marked_ts, marked_ino, completed_ts, completed_ino, dirty_ts, dirty_ino, dirty_idx)
    assert start.tolist() == [10, 40] and end.tolist() == [20, 50] and pages.tolist() == [2, 1]
