"""Inodes dirty only in their metadata (a directory whose entries changed, a renamed file):
a sync writes them too, and the capture shows them put on the dirty lists
(writeback_dirty_inode_enqueue) without any page dirtied."""

from __future__ import annotations

import numpy as np

from advisor.problems.sync_flusher_stall.model import _synced
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

DBENCH = "sync-dbench-ext4-run1-v7-zstd.dat"  # the fit run


def _sync(con, views):
    w = from_store(con, DBENCH, views=views)
    t0, t1 = con.execute("SELECT start_ts, end_ts FROM sync_ops WHERE syscall = 'sync'").fetchone()
    _, inodes, _, _ = _synced(w, t0, t1)
    return w, inodes, (t0, t1)


def test_a_sync_writes_the_inodes_dirty_in_their_metadata_only(store_of):
    with open_store(store_of(DBENCH)) as con:
        w, inodes, (t0, t1) = _sync(con, attach(con))
        written = con.execute(f"SELECT ino, max(wrote) FROM inode_writeback WHERE kind = 'written' AND ts BETWEEN {t0} AND {t1} "
                              "GROUP BY ino").fetchall()
        no_data = {ino for ino, wrote in written if wrote == 0}
        assert len(no_data) >= 40  # the capture: 60 inodes written with no page
        meta_only = np.setdiff1d(inodes, np.unique(w.dirty_ino))
        # Each one the replay writes without a page, the sync wrote without one too.
        assert len(meta_only) and set(meta_only.tolist()) <= no_data, sorted(set(meta_only.tolist()) - no_data)
        assert abs(len(inodes) - len(written)) <= 0.02 * len(written), (len(inodes), len(written))


def test_without_the_event_the_replay_says_what_it_misses(store_of):
    with open_store(store_of(DBENCH)) as con:
        w, inodes, _ = _sync(con, attach(con, hide=frozenset({"writeback:writeback_dirty_inode_enqueue"})))
        assert not len(np.setdiff1d(inodes, np.unique(w.dirty_ino)))
        assert any("dirtied without a page (metadata only) are not seen" in a for a in w.assumptions)
