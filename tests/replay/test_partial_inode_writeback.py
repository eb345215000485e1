"""The flusher writes a big file a chunk at a time (advisor.replay.pages.dirty_at): where
the capture shows an inode's pages written one by one (btrfs extent_writepage), an
inode-level event cleans all of its pages only when the pass left none dirty
(writeback_single_inode without I_DIRTY_PAGES); the end of writeback
(sb_clear_inode_writeback) says only that what was submitted is on disk."""

from __future__ import annotations

import numpy as np

from advisor.replay.device import preset
from advisor.replay.pages import dirty_at
from advisor.replay.workload import Workload, page_key


def _a(*v):
    return np.array(v, dtype=np.int64)


def _workload(all_written: bool) -> Workload:
    # Inode 257: pages 0-3 dirtied at 10-13, pages 0-1 written one by one at 20-21, then a
    # pass ends at 22 and the end of writeback at 30. Inode 300 has no page-level event:
    # its inode-level events are all there is.
    return Workload(source="t", page_size=4096, start_ts=0, end_ts=100,
                    dirty_ts=_a(10, 11, 12, 13, 14), dirty_ino=_a(257, 257, 257, 257, 300), dirty_idx=_a(0, 1, 2, 3, 0),
                    dirty_pid=_a(1, 1, 1, 1, 1), device=preset("ssd"),
                    page_wb_ts=_a(20, 21), page_wb_key=page_key(_a(257, 257), _a(0, 1)),
                    inode_wb_ts=_a(22, 30, 31), inode_wb_ino=_a(257, 257, 300),
                    inode_wb_all_written=np.array([all_written, False, False]))


def test_a_partial_pass_leaves_the_unwritten_pages_dirty():
    assert dirty_at(_workload(all_written=False), 40).tolist() == page_key(_a(257, 257), _a(2, 3)).tolist()


def test_a_pass_that_left_no_page_dirty_cleans_the_inode():
    assert dirty_at(_workload(all_written=True), 40).tolist() == []


def test_an_inode_without_page_level_events_is_cleaned_by_its_inode_level_ones():
    assert page_key(_a(300), _a(0)).tolist()[0] in dirty_at(_workload(False), 30).tolist()
    assert page_key(_a(300), _a(0)).tolist()[0] not in dirty_at(_workload(False), 31).tolist()
