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
CHMOD = "sync-chmod-ext4-run1-v7-zstd.dat"  # the fit run


def _sync(con, views, name=DBENCH):
    w = from_store(con, name, views=views)
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


def test_a_sync_writes_inodes_whose_pages_were_written_before_their_metadata_changed(store_of):
    # 3,000 files written, syncfs, chmod 600 of each, then sync: each inode had pages
    # dirtied in the capture, but the spell the chmod began had none.
    with open_store(store_of(CHMOD)) as con:
        w, inodes, (t0, t1) = _sync(con, attach(con))
        written = {ino for (ino,) in con.execute(f"SELECT DISTINCT ino FROM inode_writeback WHERE kind = 'written' "
                                                 f"AND ts BETWEEN {t0} AND {t1}").fetchall()}
        chmodded = np.intersect1d(np.unique(w.inode_enqueued_ino), np.unique(w.dirty_ino))
        assert len(chmodded) >= 3000
        assert set(chmodded.tolist()) <= set(inodes.tolist()) and set(chmodded.tolist()) <= written
        # (written: the host filesystem's 13 inodes too; the capture is unfiltered)
        assert abs(len(inodes) - len(written)) <= 0.01 * len(written), (len(inodes), len(written))
        # A write to a clean file enqueues it just before its first page: that spell is the
        # pages', and its enqueue is not taken as a metadata-only dirtying.
        first_page = {ino: ts for ino, ts in con.execute("SELECT ino, min(ts) FROM dirtying GROUP BY ino").fetchall()}
        before_pages = w.inode_enqueued_ts < np.array([first_page.get(int(i), -1) for i in w.inode_enqueued_ino])
        assert not before_pages.any()
