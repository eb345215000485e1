"""A btrfs capture without fsync returns (btrfs_sync_file alone marks a call's start)
shows no log commit: the replay says it models them from the device alone, and why."""

from __future__ import annotations

from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach

SAMPLE = "fsync-memcg-btrfs-run1-v7-zstd.dat"
SYSCALLS = frozenset({"syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync",
                      "syscalls:sys_enter_fdatasync", "syscalls:sys_exit_fdatasync"})


def test_without_fsync_returns_the_log_commits_are_modelled_and_said_so(store_of):
    with open_store(store_of(SAMPLE)) as con:
        whole = from_store(con, SAMPLE)
        assert whole.log_commits is not None and not any("log commits not measured" in a for a in whole.assumptions)
        cut = from_store(con, SAMPLE, views=attach(con, hide=SYSCALLS))
    assert cut.log_commits is None and len(cut.op("fsync")) == len(whole.op("fsync").on("btrfs"))
    (said,) = [a for a in cut.assumptions if "log commits not measured" in a]
    assert "no fsync returns: syscalls:sys_exit_fsync and sys_exit_fdatasync show them" in said
    assert "likely low" in said
