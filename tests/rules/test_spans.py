"""Syscall spans (`<name>_spans`): each enter paired with its own exit, in capture order."""

from __future__ import annotations

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store, store_for
from tests.rules import snippets as S

RULE = next(r for r in load_rules() if r.id == "btrfs-full-fsync-fallback")
T0, MS = S.T0, S.MS


def spans(tmp_path, snippet: S.Snippet) -> list[tuple]:
    path = snippet.write(tmp_path / "spans.txt")
    with open_store(store_for([path]).store) as con:
        run_rule(con, RULE, parse_release("6.1"))
        return con.execute("SELECT start_ts, end_ts, dur_ns, complete FROM fsync_spans ORDER BY start_ts, id").fetchall()


def fsync_enter(s: S.Snippet, ts: int) -> None:
    s.event(ts, "fio", 700, "sys_enter_fsync", __syscall_nr=74, fd=3)


def fsync_exit(s: S.Snippet, ts: int) -> None:
    s.event(ts, "fio", 700, "sys_exit_fsync", __syscall_nr=74, ret=0)


def test_an_exit_and_the_next_enter_on_the_same_timestamp(tmp_path):
    """A coarse trace clock (the emulated VM's) gives a task's exit and its next enter one
    timestamp: the exit still ends the first fsync, and the second gets its own exit."""
    s = S.Snippet()
    fsync_enter(s, T0)
    fsync_exit(s, T0 + 5 * MS)
    fsync_enter(s, T0 + 5 * MS)
    fsync_exit(s, T0 + 8 * MS)
    assert spans(tmp_path, s) == [(T0, T0 + 5 * MS, 5 * MS, True), (T0 + 5 * MS, T0 + 8 * MS, 3 * MS, True)]


def test_a_lost_exit_leaves_its_span_open(tmp_path):
    s = S.Snippet()
    fsync_enter(s, T0)
    fsync_enter(s, T0 + 2 * MS)  # the first one's exit is not in the capture
    fsync_exit(s, T0 + 3 * MS)
    fsync_enter(s, T0 + 4 * MS)  # still running when the capture ends
    assert spans(tmp_path, s) == [(T0, None, None, False), (T0 + 2 * MS, T0 + 3 * MS, MS, True), (T0 + 4 * MS, None, None, False)]
