"""Large folios: each dirtying event's size read from where the next folio of its file
starts (advisor.replay.folios), checked against the pages ext4 says it wrote."""

from __future__ import annotations

import numpy as np

from advisor.problems.sync_flusher_stall.model import _synced
from advisor.replay.folios import pages_per_dirtying
from advisor.replay.pages import key_bytes
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

DBENCH = "sync-dbench-ext4-run1-v7-zstd.dat"  # the fit run


def test_a_file_written_in_order_shows_its_folio_sizes():
    # dbench's 1 MiB file on ext4: writes of 32, 16, 8, 4 KiB, then 64 KiB ones (one inode).
    idx = np.array([0, 8, 12, 14] + list(range(16, 256, 16)))
    pages, known = pages_per_dirtying(np.arange(len(idx)), np.full(len(idx), 7), idx, default_pages=4.0)
    assert pages.tolist() == [8, 4, 2, 2] + [16] * 15 and known == len(idx) and pages.sum() == 256


def test_scattered_writes_keep_the_default():
    # 4 KiB writes at random places: no neighbour starts where a folio would end.
    idx = np.array([1003, 77, 5121, 333])
    pages, known = pages_per_dirtying(np.arange(4), np.full(4, 7), idx, default_pages=1.0)
    assert pages.tolist() == [1, 1, 1, 1] and known == 0
    # Another inode's folio is no neighbour, nor is one 3 pages further.
    pages, known = pages_per_dirtying(np.arange(3), np.array([7, 8, 8]), np.array([0, 16, 19]), default_pages=1.0)
    assert pages.tolist() == [1, 1, 1] and known == 0


def test_the_sync_writes_the_bytes_ext4_wrote(store_of):
    """The data a sync under dbench finds dirty, against ext4_writepages_result's
    pages_written during it: 22,080 pages (90.4 MB). One size for every dirtying (16 KiB,
    the capture's mean) made it 57 MB."""
    with open_store(store_of(DBENCH)) as con:
        views = attach(con)
        w = from_store(con, DBENCH, views=views)
        t0, t1 = con.execute("SELECT start_ts, end_ts FROM sync_ops WHERE syscall = 'sync'").fetchone()
        written = con.execute(f"SELECT sum(pages_written) FROM ext4_writepages_result WHERE ts BETWEEN {t0} AND {t1}").fetchone()[0]
        keys, _, _, _ = _synced(w, t0, t1)
        replayed = float(key_bytes(w, keys, t1).sum())
        assert w.dirty_pages is not None
        assert abs(replayed - written * w.page_size) <= 0.1 * written * w.page_size, (replayed, written)
