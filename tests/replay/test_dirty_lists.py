"""Which inodes a sync finds on the writeback lists: an fsync writes a file's pages but
leaves the inode on b_dirty (only __writeback_single_inode clears I_DIRTY_PAGES), so the
sync that follows visits it again. Capture 35 (sample_traces/README.md): ext4, 20 files
written with fsync, two with fdatasync, one 96 MiB file without, then sync(1)."""

from __future__ import annotations

import json

from advisor.replay.pages import dirty_inodes_at
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli

SAMPLE = "raw-and-named-syscalls-ext4-v7-zstd.dat"


def test_fsynced_files_stay_on_the_lists_until_the_sync(store_of):
    with open_store(store_of(SAMPLE)) as con:
        views = attach(con)
        w = from_store(con, SAMPLE, views=views)
        start, end = con.execute("SELECT start_ts, end_ts FROM sync_ops WHERE complete").fetchone()
        fsynced = {r[0] for r in con.execute(
            "SELECT DISTINCT d.ino FROM fsync_ops f ASOF JOIN dirtying d ON d.pid = f.pid AND d.ts <= f.start_ts").fetchall()}
        visited = {r[0] for r in con.execute(
            "SELECT DISTINCT ino FROM inode_writeback WHERE kind = 'written' AND ts BETWEEN ? AND ?", [start, end]).fetchall()}
    assert len(fsynced) == 22
    assert fsynced <= visited  # the capture: the sync wrote every one of them again
    assert fsynced <= set(dirty_inodes_at(w, start).tolist())


def test_own_kernel_replay_counts_them():
    r = run_cli("replay", str(SAMPLES / SAMPLE), "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    [row] = [x for x in doc["results"] if x["problem"] == "sync-flusher-stall" and x["own_kernel"]]
    observed = doc["observed"]["sync-flusher-stall"]["inodes_written_during_sync"]
    # 33 observed: 26 of the inodes the workload dirtied, and 7 on the host's root
    # filesystem (bdi 254:0; sync(2) writes every filesystem) that dirtied no page here.
    assert abs(row["metrics"]["inodes_written_during_sync"] - observed) <= 0.25 * observed
