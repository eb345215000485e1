"""btrfs log commits in a capture without block events: the log tree's blocks are pages
of btrfs's btree inode (inode 1), which goes under writeback in the committing fsync's
context (sb_mark_inode_writeback) and leaves it when the log writes are done."""

from __future__ import annotations

import numpy as np

from advisor.replay import btrfs_log
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

MS = 1_000_000
FIT = "fsync-btrfs-noblock-run1-v7-zstd.dat"  # capture 39's fit run


def _i(*ms) -> np.ndarray:
    return (np.asarray(ms, np.float64) * MS).astype(np.int64)


def test_commits_members_and_readiness_from_inode_writeback():
    # Task 10 commits alone: its file (inode 257) back at 2 ms, inode 1 under writeback
    # from 3 to 4 ms, return at 5. Tasks 11 and 12 share one: 12 marks inode 1 at 13 ms,
    # 11 (whose file was back at 11 ms) returns with it at 15.
    fsyncs = dict(fsync_pid=np.array([10, 11, 12]), fsync_start=_i(0, 10, 10.5), fsync_end=_i(5, 15, 15),
                  fsync_ino=np.array([257, 258, 259]))
    marks = {"ts": _i(1, 3, 12, 13), "pid": np.array([10, 10, 11, 12]), "ino": np.array([257, 1, 258, 1])}
    clears = {"ts": _i(2, 4, 11, 12.5, 14), "ino": np.array([257, 1, 258, 259, 1])}
    commits = btrfs_log.observe_inode_writeback(**fsyncs, marks=marks, clears=clears)
    assert commits.commit_ns.tolist() == [2 * MS, 2 * MS]  # first log write to the committer's return
    assert (commits.solo, commits.shared) == (1, 1)
    assert commits.solo_prep_ns.tolist() == [1 * MS]  # data back at 2 ms, log writes from 3 ms
    # Inode 1 marked by a task outside its fsyncs (a transaction commit) is no log commit.
    marks["pid"] = np.array([10, 99, 11, 99])
    assert btrfs_log.observe_inode_writeback(**fsyncs, marks=marks, clears=clears) is None


def test_the_capture_without_block_events_shows_its_log_commits(store_of):
    with open_store(store_of(FIT)) as con:
        w = from_store(con, FIT)
        fsync = w.op("fsync")
        marked_inside = sum(
            bool(((w.inode_marked_ino == 1) & (w.inode_marked_pid == p) & (w.inode_marked_ts >= s) & (w.inode_marked_ts <= e)).any())
            for p, s, e in zip(fsync.pid, fsync.start, fsync.end))
        assert w.log_commits is not None and len(w.log_commits.commit_ns) == marked_inside > 800
        assert any("btree inode's writeback inside the fsyncs" in a for a in w.assumptions)
        # Without the marks there is nothing to time them by, and the replay says so.
        hidden = from_store(con, FIT, views=attach(con, hide=frozenset({"writeback:sb_mark_inode_writeback"})))
        assert hidden.log_commits is None
        assert any("btrfs log commits not measured (no block requests, nor the btree inode's writeback" in a
                   for a in hidden.assumptions)
