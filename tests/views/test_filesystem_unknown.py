"""A filesystem-specific finding on a capture that shows no filesystem at all (only the
fsync syscalls recorded): the calls may have been on any filesystem, and the finding
says that it holds only if they were on the rule's."""

from __future__ import annotations

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store
from advisor.views import attach

SAMPLE = "fsync-memcg-btrfs-run1-v7-zstd.dat"
RULE = next(r for r in load_rules() if r.id == "btrfs-full-fsync-fallback")
NOTE = "The capture shows no filesystem"


def test_fsyncs_alone_are_not_called_btrfs(store_of):
    with open_store(store_of(SAMPLE)) as con:
        recorded = {f"{s}:{e}" for s, e in con.execute("SELECT system, event FROM event_formats").fetchall()}
        keep = {"syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync"}
        assert keep < recorded
        views = attach(con, hide=frozenset(recorded - keep))
        assert not views.filesystems.shown and not views.filesystems.other_bdis
        f = run_rule(con, RULE, parse_release("5.4.0"), views)
        assert f.verdict == "at-risk" and f.metrics["fsync_count"] > 1000
        assert NOTE in f.message and "btrfs" in f.message.split(NOTE)[1]

        whole = run_rule(con, RULE, parse_release("5.4.0"), attach(con))
        assert "btrfs" in whole.filesystems and NOTE not in whole.message
