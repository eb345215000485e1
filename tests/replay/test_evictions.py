"""A deleted file's dirty pages are dropped, never written (advisor.replay.pages): an
eviction cleans its inode's pages dirtied before it, and a later file that reuses the
inode number is dirty again."""

from __future__ import annotations

import numpy as np

from advisor.replay.device import preset
from advisor.replay.pages import dirty_at, dirty_inodes_at, not_evicted
from advisor.replay.workload import Workload, page_key


def _a(*v):
    return np.array(v, dtype=np.int64)


def test_an_evicted_inode_has_nothing_dirty_until_its_number_is_reused():
    w = Workload(source="t", page_size=4096, start_ts=0, end_ts=100, dirty_ts=_a(10, 11, 12, 60), dirty_ino=_a(5, 5, 6, 5),
                 dirty_idx=_a(0, 1, 0, 0), dirty_pid=_a(1, 1, 1, 1), device=preset("ssd"),
                 inode_evicted_ts=_a(50), inode_evicted_ino=_a(5))
    assert dirty_at(w, 40).tolist() == page_key(_a(5, 5, 6), _a(0, 1, 0)).tolist()
    assert dirty_at(w, 55).tolist() == page_key(_a(6), _a(0)).tolist()
    assert dirty_inodes_at(w, 55).tolist() == [6]
    assert dirty_at(w, 70).tolist() == page_key(_a(5, 6), _a(0, 0)).tolist()
    assert dirty_inodes_at(w, 70).tolist() == [5, 6]
    assert not_evicted(w, _a(5, 6), 55).tolist() == [6]
