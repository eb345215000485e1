"""A query's optional views: where the capture has no source for one, the query reads it
empty and its metrics say what they were measured without."""

from __future__ import annotations

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store
from advisor.views import attach

RULE = next(r for r in load_rules() if r.id == "btrfs-delalloc-overflush")
FSYNC_EVENTS = frozenset({"syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync", "syscalls:sys_enter_fdatasync",
                          "syscalls:sys_exit_fdatasync", "btrfs:btrfs_sync_file"})


def test_a_share_leaves_out_the_calls_the_capture_shows(store_of):
    """4 random writers and snapshots on btrfs, no fsync: without the fsync events (a text
    capture, where an event that never fired has no line) the share still leaves out
    the snapshots' and sync's unbounded writeback: 8 KiB of whole-inode flushes, not
    1.4 MiB, and the finding says what it was measured without."""
    with open_store(store_of("snapshot-rand4-btrfs-run1-v7-zstd.dat")) as con:
        release = parse_release("6.18.44")
        full = run_rule(con, RULE, release, attach(con))
        cut = run_rule(con, RULE, release, attach(con, hide=FSYNC_EVENTS))
        without_calls = run_rule(con, RULE, release, attach(con, hide=FSYNC_EVENTS | {"syscalls:sys_enter_ioctl", "syscalls:sys_exit_ioctl"}))
    assert full.partial == [] and full.metrics["whole_inode_flushed_bytes"] == 8192
    assert cut.metrics["whole_inode_flushed_bytes"] == 8192
    assert cut.metrics["whole_inode_flush_share"] == full.metrics["whole_inode_flush_share"]
    assert cut.measured_from["whole_inode_flush_share"] == ["flush_space", "pages_written.nr_to_write", "sync_ops", "snapshot_ops"]
    [share, nbytes] = cut.partial
    assert share["metric"] == "whole_inode_flush_share" and nbytes["metric"] == "whole_inode_flushed_bytes"
    assert share["without"].startswith("fsync_ops: ") and "syscalls:sys_enter_fsync" in share["record"]
    assert "whole_inode_flush_share, whole_inode_flushed_bytes are measured without fsync_ops: " in cut.message
    assert "syscalls:sys_enter_fsync" in cut.capture_command
    # Without the snapshot ioctls too, their flushes count: the share rises.
    assert without_calls.metrics["whole_inode_flushed_bytes"] > 8192
    assert "snapshot_ops" in " ".join(u["without"] for u in without_calls.partial)
