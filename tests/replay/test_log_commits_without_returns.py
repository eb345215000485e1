"""A btrfs capture that shows its fsyncs' starts only (btrfs_sync_file, no
sys_exit_fsync): the log commits come from the block layer, each fsync's return from the
commit it returned with (advisor/replay/btrfs_returns.py). The same capture with the
syscalls is the truth they are checked against; without block requests either, the
replay says it models the commits from the device alone, and why."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.problems.btrfs_full_fsync_fallback import model as full_fsync
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

SYSCALLS = frozenset({"syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync",
                      "syscalls:sys_enter_fdatasync", "syscalls:sys_exit_fdatasync"})
BLOCK = frozenset({"block:block_rq_issue", "block:block_rq_complete", "block:block_rq_insert"})
FUA = "fsync-fua-btrfs-v7-zstd.dat"


# A loop device (no FUA: each superblock write is followed by a cache flush) and a
# null_blk device with FUA (the superblock write alone is durable, RWBS WFSM).
@pytest.fixture(scope="module", params=["fsync-memcg-btrfs-run2-v7-zstd.dat", "dbench-btrfs-v7-zstd.dat", FUA])
def both(request, store_of):
    """The capture as recorded, and the same without the fsync syscalls."""
    with open_store(store_of(request.param)) as con:
        yield from_store(con, request.param), from_store(con, request.param, views=attach(con, hide=SYSCALLS))


def test_the_log_commits_are_the_same_without_the_returns(both):
    whole, cut = both
    seen, inferred = whole.log_commits, cut.log_commits
    assert not seen.returns_inferred and inferred.returns_inferred
    assert len(cut.op("fsync")) == len(whole.op("fsync").on("btrfs")) and not cut.op("fsync").complete.any()
    # Every commit is found from its superblock write, whether or not the returns are seen.
    assert len(inferred.commit_ns) == len(seen.commit_ns)
    assert inferred.tick_ns == seen.tick_ns
    if seen.tick_ns:  # batching (a rotational device): the same jiffies
        assert np.median(inferred.batch_ticks) == np.median(seen.batch_ticks)
    for a, b in ((inferred.commit_ns, seen.commit_ns), (inferred.solo_prep_ns, seen.solo_prep_ns)):
        assert abs(np.median(a) - np.median(b)) <= 0.15 * np.median(b)
    (said,) = [a for a in cut.assumptions if "btrfs log commits in the capture" in a]
    assert "shows the fsyncs' starts only" in said


def test_the_inferred_returns_stay_out_of_the_observed_column(both):
    whole, cut = both
    assert cut.op("fsync").end_inferred is not None and (cut.op("fsync").end_inferred >= 0).mean() > 0.9
    observed = full_fsync._observed(cut)
    assert observed == {"log_commits": len(whole.log_commits.commit_ns)}  # no durations: none was seen


def test_the_replay_is_the_same_without_the_returns(both):
    whole, cut = both
    a, b = full_fsync._simulate(whole, full_fsync.FAST), full_fsync._simulate(cut, full_fsync.FAST)
    for metric in ("fsync_p50_ms", "fsync_p99_ms"):
        assert abs(b[metric] - a[metric]) <= 0.1 * a[metric], metric


def test_the_fua_capture_ends_its_commits_with_fua_writes(store_of):
    with open_store(store_of(FUA)) as con:
        attach(con)
        rwbs = con.execute("SELECT DISTINCT rwbs FROM block_requests WHERE sector = 128 AND bytes = 4096").fetchall()
    assert rwbs == [("WFSM",)]


def test_without_block_requests_the_log_commits_are_modelled_and_said_so(store_of):
    name = "fsync-memcg-btrfs-run1-v7-zstd.dat"
    with open_store(store_of(name)) as con:
        cut = from_store(con, name, views=attach(con, hide=SYSCALLS | BLOCK))
    assert cut.log_commits is None and len(cut.op("fsync"))
    (said,) = [a for a in cut.assumptions if "log commits not measured" in a]
    assert "(no block requests, nor the btree inode's writeback inside an fsync)" in said and "likely low" in said
