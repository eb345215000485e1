"""Syscall spans (fsync_ops and friends): each enter paired with its own exit, in capture order."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Snippet
from advisor.store import open_store, store_for
from advisor.views import attach


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
