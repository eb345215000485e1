"""A filesystem-specific finding on a capture that shows no filesystem at all (only the
fsync syscalls recorded): the calls may have been on any filesystem, and the finding
says that it holds only if they were on the rule's."""

from __future__ import annotations

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store
from advisor.views import attach
from advisor.views.filesystems import Filesystems

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


def test_a_bdi_without_a_device_is_no_block_device_filesystem():
    """The kernel names a bdi without a device "(unknown)" (tmpfs, proc, pipes:
    `writeback_mark_inode_dirty: bdi (unknown): ino=24 state=I_DIRTY_SYNC`). It shows
    writeback was recorded, so btrfs would have shown its own bdi, but it is no block
    device that ext4 or XFS could be on."""
    only_tmpfs = Filesystems(deviceless=True)
    assert only_tmpfs.knows_absent("btrfs") and not only_tmpfs.knows_absent("ext4")
    assert "block-device" not in only_tmpfs.describe() and "(unknown)" in only_tmpfs.describe()
    xfs_and_tmpfs = Filesystems(shown={"xfs": ["12 xfs events"]}, deviceless=True)
    assert xfs_and_tmpfs.knows_absent("ext4"), "a deviceless bdi cannot hide an ext4 filesystem"
    xfs_and_a_disk = Filesystems(shown={"xfs": ["12 xfs events"]}, other_bdis=["8:0"])
    assert not xfs_and_a_disk.knows_absent("ext4")
