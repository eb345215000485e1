"""A sync's ->sync_fs (ext4's journal commit, XFS's log force, btrfs's transaction commit)
is replayed as recorded, from ext4_sync_fs or btrfs_sync_fs when the capture has it, else
from the sync's last data write (ext4, XFS) or the flusher's last work item (btrfs); the
two ext4 sources say the same on a capture that has both. The sync caller's wait for
pages submitted before the sync is replayed as recorded when the capture names them."""

from __future__ import annotations

import pytest

from advisor.problems.sync_flusher_stall.model import MODEL
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

DBENCH = "sync-dbench-ext4-run1-v7-zstd.dat"  # a fit run


def _replayed(store_of, name: str, hide: frozenset[str] = frozenset()):
    with open_store(store_of(name)) as con:
        views = attach(con, hide=hide)
        w = from_store(con, name, views=views)
        t0, t1 = con.execute("SELECT start_ts, end_ts FROM sync_ops WHERE syscall = 'sync' ORDER BY dur_ns DESC LIMIT 1").fetchone()
        first = con.execute(f"SELECT min(ts) FROM sync_fs_calls WHERE ts BETWEEN {t0} AND {t1}").fetchone()[0] if views.met("sync_fs_calls") else None
    return w, {p.id: MODEL.simulate(w, p) for p in MODEL.policies}, (t0, t1, first)


def test_the_tail_from_ext4_sync_fs_is_the_same_under_every_policy(store_of):
    w, by_policy, (t0, t1, first) = _replayed(store_of, DBENCH)
    recorded = (t1 - first) / 1e9
    assert 0.2 < recorded < 0.4  # the capture: 0.30 s from the first ext4_sync_fs to the return
    for m in by_policy.values():
        assert m["sync_fs_seconds"] == pytest.approx(recorded, abs=1e-6)
        assert m["sync_seconds"] > m["sync_fs_seconds"]
    assert any("->sync_fs" in a and "ext4_sync_fs" in a for a in w.assumptions)


def test_without_ext4_events_the_sync_data_writes_bound_it(store_of):
    _, full, (_, t1, first) = _replayed(store_of, DBENCH)
    hidden = frozenset({"ext4:ext4_sync_fs"})
    w, cut, _ = _replayed(store_of, DBENCH, hidden)
    for name, m in cut.items():
        # The last data write completed 0.3 ms before ext4_sync_fs's entry.
        assert m["sync_fs_seconds"] == pytest.approx(full[name]["sync_fs_seconds"], abs=0.005)
    assert any("last data write completion" in a for a in w.assumptions)


def test_without_either_the_replay_says_it_is_left_out(store_of):
    hidden = frozenset({"ext4:ext4_sync_fs", "block:block_rq_issue", "block:block_rq_complete", "block:block_rq_insert"})
    w, cut, _ = _replayed(store_of, DBENCH, hidden)
    assert all("sync_fs_seconds" not in m for m in cut.values())
    assert any("->sync_fs" in a and "not replayed" in a for a in w.assumptions)


def test_btrfs_sync_fs_starts_the_commit(store_of):
    w, by_policy, (t0, t1, first) = _replayed(store_of, "untar-full-btrfs-run1-v7-zstd.dat")
    assert first is not None and t0 < first < t1
    for m in by_policy.values():
        assert m["sync_fs_seconds"] == pytest.approx((t1 - first) / 1e9, abs=1e-6)
        assert "transaction_commit_seconds" not in m
    assert any("btrfs_sync_fs" in a for a in w.assumptions)


def test_btrfs_without_btrfs_sync_fs_takes_the_commit_from_its_end(store_of):
    w, by_policy, _ = _replayed(store_of, "untar-full-btrfs-run1-v7-zstd.dat", frozenset({"btrfs:btrfs_sync_fs"}))
    assert not len(w.sync_fs_start_ts)
    for m in by_policy.values():
        assert "sync_fs_seconds" not in m and m["transaction_commit_seconds"] > 0


BTRFS_FSMARK = "sync-fsmark-btrfs-run1-v7-zstd.dat"  # a fit run


def test_the_wait_for_pages_submitted_before_the_sync_is_taken_as_recorded(store_of):
    _, by_policy, (t0, t1, first) = _replayed(store_of, BTRFS_FSMARK)
    for m in by_policy.values():
        # The capture: the caller's last wait on a page background writeback submitted
        # before the sync began came 1,278.6 ms in, before ->sync_fs at 1,628 ms.
        assert m["backlog_wait_seconds"] == pytest.approx(1.2786, abs=0.0005)
        assert m["backlog_wait_seconds"] < (first - t0) / 1e9
    # Without the waits' pages, or without when pages were submitted, nothing is taken.
    for hidden in ("writeback:folio_wait_writeback", "btrfs:extent_writepage"):
        _, cut, _ = _replayed(store_of, BTRFS_FSMARK, frozenset({hidden}))
        assert all("backlog_wait_seconds" not in m for m in cut.values())
