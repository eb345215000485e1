"""A text capture keeps the names fields are printed under: btrfs's extent_writepage
prints its `index` as "page_index=" and its `root_objectid` as "root=5(FS_TREE)". The
pages_written view reads them there and gives the same rows as from the trace.dat."""

from __future__ import annotations

from advisor.store import open_store
from advisor.views import attach

# The same ring buffer as tracefs text (`cat trace`) and as a trace.dat (`trace-cmd extract`).
TEXT = "fsync-memcg-btrfs-run3-tracefs.trace.txt"
DAT = "fsync-memcg-btrfs-run3-tracefs.dat"


def _pages_written(path):
    with open_store(path) as con:
        views = attach(con)
        assert views.met("pages_written.index") and views.met("pages_written.root") and views.met("pages_written.nr_to_write")
        return con.execute('SELECT ts, pid, ino, "index", root, nr_to_write FROM pages_written ORDER BY pid, ino, "index", nr_to_write').fetchall()


def test_text_and_trace_dat_give_the_same_pages_written(store_of):
    text, dat = _pages_written(store_of(TEXT)), _pages_written(store_of(DAT))
    assert len(text) == len(dat) == 1875
    assert [r[1:] for r in text] == [r[1:] for r in dat]
    # The text prints microseconds, rounded: each row within 1 us of the trace.dat's.
    assert max(abs(a[0] - b[0]) for a, b in zip(text, dat)) <= 1000
    assert {r[4] for r in text} == {5}  # root=5(FS_TREE)
