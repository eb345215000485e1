"""A text capture keeps the names fields are printed under: btrfs's extent_writepage
prints its `index` as "page_index=" and its `root_objectid` as "root=5(FS_TREE)", and
btrfs_transaction_commit its `generation` as "gen=". The pages_written and commits views
read them there and give the same rows as from the trace.dat. The block events print
their fields by position, and ext4, jbd2, xfs and writeback's inode events as `dev 7,0
ino 12 ...`: both are read into the trace.dat's fields and values."""

from __future__ import annotations

import subprocess

import pytest

from advisor.store import ingest_trace, open_store
from advisor.views import attach
from tests.conftest import SAMPLES, need_trace_cmd

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


def _commits(path):
    with open_store(path) as con:
        assert attach(con).met("commits")
        return con.execute("SELECT end_ts, pid, comm, transaction FROM commits ORDER BY end_ts").fetchall()


def test_btrfs_commits_read_from_text_as_from_the_trace_dat(store_of, tmp_path):
    """`trace-cmd report` prints "btrfs_transaction_commit: 8ed200da-...: root=1(ROOT_TREE) gen=9"."""
    need_trace_cmd()
    dat = "sync-fsmark-btrfs-run1-v7-zstd.dat"
    text = tmp_path / "commits.txt"
    report = subprocess.Popen(["trace-cmd", "report", "-i", str(SAMPLES / dat)], stdout=subprocess.PIPE, text=True)
    with text.open("w") as f:  # the header line and the commits, as if recorded alone
        f.writelines(line for line in report.stdout if line.startswith("cpus=") or "btrfs_transaction_commit:" in line)
    assert report.wait() == 0
    ingest_trace(text, tmp_path / "commits.duckdb")
    from_text, from_dat = _commits(tmp_path / "commits.duckdb"), _commits(store_of(dat))
    assert len(from_text) == len(from_dat) == 7
    assert [r[1:] for r in from_text] == [r[1:] for r in from_dat]
    assert max(abs(a[0] - b[0]) for a, b in zip(from_text, from_dat)) <= 1000


def _block(path):
    with open_store(path) as con:
        assert attach(con).met("block_requests")
        issues = con.execute("SELECT dev, sector, nr_sector, bytes, ioprio, rwbs, comm, cmd FROM block_rq_issue").fetchall()
        completions = con.execute("SELECT dev, sector, nr_sector, error, ioprio, rwbs, cmd FROM block_rq_complete").fetchall()
        requests = con.execute("SELECT dev, pid, comm, rwbs, write, meta, flush, sector, bytes, insert_ts IS NULL, "
                               "complete_ts IS NULL FROM block_requests").fetchall()
        return sorted(issues), sorted(completions), sorted(requests)


def test_block_events_read_from_text_as_from_the_trace_dat(store_of):
    """tracefs prints "block_rq_issue: 7,0 WS 8192 () 4753472 + 16 be,0,4 [kworker/0:0H]":
    dev 7340032 (7 << 20), ioprio 16388 (class be = 2, level 4). The requests are the
    same multiset (the text's microseconds reorder ties, so compare sorted)."""
    text, dat = _block(store_of(TEXT)), _block(store_of(DAT))
    assert [len(t) for t in text] == [len(d) for d in dat] and len(text[2]) == 3002
    assert text == dat
    assert {r[0] for r in text[0]} == {7 << 20} and {r[4] for r in text[0]} == {0, 2 << 13 | 4}  # none,0,0 and be,0,4


def test_block_events_of_trace_cmd_report_text(tmp_path):
    """`trace-cmd report` prints the priority class it cannot name as a number: "7,0 RM 4096
    () 33928 + 8 0x2,0,4 [dd]"; the -R report prints "dev=7340032 sector=33928 ..." pairs.
    Both give the trace.dat's rows."""
    rows = {}
    for name in ("tracefs-ext4.report.txt", "tracefs-ext4.report-raw.txt", "tracefs-ext4.dat"):
        ingest_trace(SAMPLES / name, tmp_path / f"{name}.duckdb")
        rows[name] = _block(tmp_path / f"{name}.duckdb")
    assert rows["tracefs-ext4.report.txt"] == rows["tracefs-ext4.report-raw.txt"] == rows["tracefs-ext4.dat"]
    assert len(rows["tracefs-ext4.dat"][0]) > 0


_DEV_FIRST_VIEWS = {
    "inode_evictions": "SELECT ts, pid, ino, fs FROM inode_evictions",
    "inodes_enqueued": "SELECT ts, pid, dev, ino FROM inodes_enqueued",
    "inode_writeback": "SELECT ts, pid, dev, ino, kind FROM inode_writeback",
    "sync_fs_calls": "SELECT * EXCLUDE (ts) FROM sync_fs_calls",
    "commits": "SELECT start_ts, end_ts, fs, transaction FROM commits",
}


def _dev_first_rows(path, views_read):
    with open_store(path) as con:
        views = attach(con)
        assert all(views.met(v) for v in views_read)
        return {v: sorted(con.execute(_DEV_FIRST_VIEWS[v]).fetchall(), key=repr) for v in views_read}


@pytest.mark.parametrize("dat, events, views_read", [
    ("sync-dbench-ext4-run1-v7-zstd.dat",
     ("ext4_evict_inode", "ext4_sync_fs", "writeback_dirty_inode_enqueue", "sb_mark_inode_writeback", "sb_clear_inode_writeback",
      "writeback_single_inode"),
     ("inode_evictions", "inodes_enqueued", "inode_writeback", "sync_fs_calls")),
    ("all-events-ext4-v7-zstd.dat", ("jbd2_start_commit", "jbd2_end_commit"), ("commits",)),
])
def test_device_first_events_read_from_text_as_from_the_trace_dat(store_of, tmp_path, dat, events, views_read):
    """`trace-cmd report` prints "ext4_evict_inode: dev 7,0 ino 281 nlink 0" and
    "writeback_dirty_inode_enqueue: dev 7,0 ino 131074 dirtied 4305776512 state 0x10 mode
    040700": the views built from them give the trace.dat's rows (times to the text's
    microsecond, so those are compared rounded)."""
    need_trace_cmd()
    text = tmp_path / "dev-first.txt"
    report = subprocess.Popen(["trace-cmd", "report", "-i", str(SAMPLES / dat)], stdout=subprocess.PIPE, text=True)
    with text.open("w") as f:
        f.writelines(line for line in report.stdout if line.startswith("cpus=") or any(f" {e}: " in line for e in events))
    assert report.wait() == 0
    ingest_trace(text, tmp_path / "dev-first.duckdb")
    from_text = _dev_first_rows(tmp_path / "dev-first.duckdb", views_read)
    from_dat = _dev_first_rows(store_of(dat), views_read)

    def rounded(rows):  # nanoseconds to the microsecond the text prints
        return sorted((tuple((v + 500) // 1000 if isinstance(v, int) and v > 10**12 else v for v in r) for r in rows), key=repr)

    for view in views_read:
        assert len(from_text[view]) == len(from_dat[view]) > 0, view
        assert rounded(from_text[view]) == rounded(from_dat[view]), view
