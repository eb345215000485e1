"""Two things the replay infers from the capture: how large a folio one dirtying event
stands for, and, when the capture's kernel is unknown, whether every policy misses."""

from __future__ import annotations

import numpy as np

from advisor.analyze.replay import missed_by_every_policy
from advisor.replay import device
from advisor.replay.workload import Workload, _adjacent_dirtied_pages


def _workload(ino, idx) -> Workload:
    n = len(idx)
    return Workload(source="t", page_size=4096, start_ts=0, end_ts=1, dirty_ts=np.arange(n, dtype=np.int64),
                    dirty_ino=np.asarray(ino, np.int64), dirty_idx=np.asarray(idx, np.int64), dirty_pid=np.ones(n, np.int64),
                    device=device.preset("ssd"))


def test_neighbouring_dirtied_pages_one_apart_are_one_page_folios():
    # fio writing a btrfs file in order (a user's capture: 15,376 events, indexes 0..15375),
    # and btrfs's metadata inode 1, whose extent buffers are not the file's folios.
    none = np.zeros(0, np.int64)
    assert _adjacent_dirtied_pages(_workload([257] * 6 + [1] * 3, [0, 1, 2, 3, 3, 4, 0, 4, 8]), none) == (4, 4)
    # xfs's 16 KiB folios: dirtied at their first index, four pages apart.
    assert _adjacent_dirtied_pages(_workload([12] * 4, [0, 4, 8, 12]), none) == (0, 3)
    # Different inodes are not neighbours; one page per file says nothing.
    assert _adjacent_dirtied_pages(_workload([5, 6, 7], [0, 1, 2]), none) == (0, 0)
    # ext4's metadata buffers in /dev/loop0's own inode (7 << 20), one page each, are not
    # the files' folios either.
    loop0 = 7 << 20
    w = _workload([loop0] * 4 + [12] * 2, [100, 101, 102, 103, 0, 4])
    assert _adjacent_dirtied_pages(w, np.array([loop0])) == (0, 1)
    assert _adjacent_dirtied_pages(w, none) == (3, 4)


def test_a_metric_every_policy_misses_is_named():
    rows = [{"policy": "a", "metrics": {"sync_seconds": 0.0116, "inodes": 10}},
            {"policy": "b", "metrics": {"sync_seconds": 0.0114, "inodes": 12}}]
    missed = missed_by_every_policy(rows, {"sync_seconds": 0.0183, "inodes": 11})
    assert list(missed) == ["sync_seconds"] and [round(e["error"], 2) for e in missed["sync_seconds"]] == [-0.37, -0.38]
    # One policy close enough: the kernel may run that one.
    rows[1]["metrics"]["sync_seconds"] = 0.017
    assert missed_by_every_policy(rows, {"sync_seconds": 0.0183}) == {}
