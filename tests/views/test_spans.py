"""Syscall spans (fsync_ops and friends): each enter paired with its own exit, in capture order."""

from __future__ import annotations

import dataclasses

import pytest

from advisor.problems.fixtures import MS, T0, Snippet
from advisor.store import open_store, store_for
from advisor.views import CATALOG, attach
from advisor.views.model import build
from advisor.views.present import Present
from tests.conftest import sample_ids


def spans(tmp_path, snippet: Snippet) -> list[tuple]:
    path = snippet.write(tmp_path / "spans.txt")
    with open_store(store_for([path]).store) as con:
        attach(con)
        return con.execute("SELECT start_ts, end_ts, dur_ns, complete FROM fsync_ops ORDER BY start_ts").fetchall()


def fsync_enter(s: Snippet, ts: int) -> None:
    s.event(ts, "fio", 700, "sys_enter_fsync", __syscall_nr=74, fd=3)


def fsync_exit(s: Snippet, ts: int) -> None:
    s.event(ts, "fio", 700, "sys_exit_fsync", __syscall_nr=74, ret=0)


def test_an_exit_and_the_next_enter_on_the_same_timestamp(tmp_path):
    """A coarse trace clock (the emulated VM's) gives a task's exit and its next enter one
    timestamp: the exit still ends the first fsync, and the second gets its own exit."""
    s = Snippet()
    fsync_enter(s, T0)
    fsync_exit(s, T0 + 5 * MS)
    fsync_enter(s, T0 + 5 * MS)
    fsync_exit(s, T0 + 8 * MS)
    assert spans(tmp_path, s) == [(T0, T0 + 5 * MS, 5 * MS, True), (T0 + 5 * MS, T0 + 8 * MS, 3 * MS, True)]


def test_a_lost_exit_leaves_its_span_open(tmp_path):
    s = Snippet()
    fsync_enter(s, T0)
    fsync_enter(s, T0 + 2 * MS)  # the first one's exit is not in the capture
    fsync_exit(s, T0 + 3 * MS)
    fsync_enter(s, T0 + 4 * MS)  # still running when the capture ends
    assert spans(tmp_path, s) == [(T0, None, None, False), (T0 + 2 * MS, T0 + 3 * MS, MS, True), (T0 + 4 * MS, None, None, False)]


def test_a_span_across_lost_events_stays_open(tmp_path):
    """Events were dropped inside the second fsync: its exit may be a later call's (whose
    enter was dropped), so it has no duration. The spans around it keep theirs."""
    s = Snippet()
    fsync_enter(s, T0)
    fsync_exit(s, T0 + MS)
    fsync_enter(s, T0 + 2 * MS)
    s.lost(T0 + 3 * MS, 40)
    fsync_exit(s, T0 + 3 * MS)
    fsync_enter(s, T0 + 4 * MS)
    fsync_exit(s, T0 + 6 * MS)
    assert spans(tmp_path, s) == [(T0, T0 + MS, MS, True), (T0 + 2 * MS, None, None, False), (T0 + 4 * MS, T0 + 6 * MS, 2 * MS, True)]


SPAN_VIEWS = ("sync_ops", "fsync_ops", "snapshot_ops", "write_ops", "sync_file_range_ops")


@pytest.mark.parametrize("sample", sample_ids("trace.dat"))
def test_the_parsers_pairs_equal_the_sql_window(store_of, sample):
    """trace.dat stores carry the syscalls paired while the capture was read
    (raw.syscall_spans); every span view built from them has exactly the rows the SQL
    window over the enter and exit events gives."""
    with open_store(store_of(sample)) as con:
        present = Present.of(con)
        assert present.paired_syscalls
        window = dataclasses.replace(present, paired_syscalls=False)
        checked = 0
        for name in SPAN_VIEWS:
            built = build(CATALOG[name], present)
            if not built.available:
                continue
            paired, windowed = built.sql(present), built.sql(window)
            if paired == windowed:  # filled from other events (sync_ops from the flusher's work)
                continue
            n = con.execute(f"SELECT count(*) FROM ({paired})").fetchone()[0]
            assert n == con.execute(f"SELECT count(*) FROM ({windowed})").fetchone()[0], name
            for a, b in ((paired, windowed), (windowed, paired)):
                assert con.execute(f"SELECT count(*) FROM (({a}) EXCEPT ALL ({b}))").fetchone()[0] == 0, name
            checked += n
        spans = con.execute("SELECT count(*) FROM raw.syscall_spans").fetchone()[0]
        assert checked <= spans


def test_captures_with_many_calls_are_paired(store_of):
    """The comparison above is not vacuous: the samples hold thousands of paired calls."""
    total = 0
    for sample in sample_ids("trace.dat"):
        with open_store(store_of(sample)) as con:
            total += con.execute("SELECT count(*) FROM raw.syscall_spans WHERE end_ts IS NOT NULL").fetchone()[0]
    assert total > 10_000


def test_an_fsync_is_on_the_filesystem_whose_event_falls_inside_it(tmp_path):
    """btrfs_sync_file is recorded: an fsync with one inside is on btrfs, one without is
    on another filesystem (a file on the root ext4), and one still open is unknown."""
    s = Snippet()
    fsync_enter(s, T0)
    s.event(T0 + MS // 10, "fio", 700, "btrfs_sync_file", ino=257, parent=256, datasync=0, root_objectid=5)
    fsync_exit(s, T0 + MS)
    s.event(T0 + 2 * MS, "journal", 800, "sys_enter_fsync", __syscall_nr=74, fd=4)
    s.event(T0 + 3 * MS, "journal", 800, "sys_exit_fsync", __syscall_nr=74, ret=0)
    fsync_enter(s, T0 + 4 * MS)
    path = s.write(tmp_path / "fs.txt")
    with open_store(store_for([path]).store) as con:
        attach(con)
        rows = con.execute("SELECT pid, fs FROM fsync_ops ORDER BY start_ts").fetchall()
    assert rows == [(700, "btrfs"), (800, "other"), (700, None)]
