"""Writebacks that wrote nothing (advisor.replay.redirty): ext4's journal commit re-dirties
a delayed-allocation folio, puts the inode under writeback and takes it off at once, in
its own context. The folio stays dirty; a real writeback, or a ramdisk completing IO in
the submitting task without re-dirtying, still cleans."""

from __future__ import annotations

import numpy as np

from advisor.replay.redirty import COMPLETED, MARKED, WRITTEN, empty_writebacks
from advisor.replay.workload import page_key

WRITER, JBD2, FLUSHER, IRQ = 100, 200, 300, 0


def _a(*v):
    return np.array(v, dtype=np.int64)


def test_a_journal_commit_that_redirties_cleans_nothing():
    # The writer dirties folios 0 and 4 of inode 12; jbd2 re-dirties each, marks, clears.
    dirty = dict(dirty_ts=_a(10, 20, 1000, 1010), dirty_ino=_a(12, 12, 12, 12), dirty_key=page_key(_a(12, 12, 12, 12), _a(0, 4, 0, 4)),
                 dirty_pid=_a(WRITER, WRITER, JBD2, JBD2))
    wb = dict(wb_ts=_a(1001, 1002, 1011, 1012), wb_ino=_a(12, 12, 12, 12), wb_pid=_a(JBD2, JBD2, JBD2, JBD2),
              wb_kind=_a(MARKED, COMPLETED, MARKED, COMPLETED))
    drop_wb, drop_dirty = empty_writebacks(**wb, **dirty)
    assert drop_wb.all()
    assert drop_dirty.tolist() == [False, False, True, True]


def test_a_real_writeback_still_cleans():
    # The flusher writes the inode; the completion comes from another context.
    dirty = dict(dirty_ts=_a(10, 20), dirty_ino=_a(12, 12), dirty_key=page_key(_a(12, 12), _a(0, 4)), dirty_pid=_a(WRITER, WRITER))
    wb = dict(wb_ts=_a(500, 501, 900), wb_ino=_a(12, 12, 12), wb_pid=_a(FLUSHER, FLUSHER, IRQ),
              wb_kind=_a(MARKED, WRITTEN, COMPLETED))
    drop_wb, drop_dirty = empty_writebacks(**wb, **dirty)
    assert not drop_wb.any() and not drop_dirty.any()


def test_a_ramdisk_fsync_completing_in_the_caller_still_cleans():
    # brd completes the bio in the submitting task: mark and clear by the writer itself,
    # but its folios were dirtied once each (no re-dirtying), so the IO happened.
    dirty = dict(dirty_ts=_a(10, 20), dirty_ino=_a(12, 12), dirty_key=page_key(_a(12, 12), _a(0, 4)), dirty_pid=_a(WRITER, WRITER))
    wb = dict(wb_ts=_a(30, 31), wb_ino=_a(12, 12), wb_pid=_a(WRITER, WRITER), wb_kind=_a(MARKED, COMPLETED))
    drop_wb, drop_dirty = empty_writebacks(**wb, **dirty)
    assert not drop_wb.any() and not drop_dirty.any()
