"""The operations users wait on: sync, fsync, the btrfs snapshot ioctl, writes.

Each is a syscall span when the capture has the syscall tracepoints; without them,
a filesystem's own events can still show fsyncs (ext4's with their durations, btrfs's
and XFS's as calls only), and the flusher's WB_SYNC_ALL work shows the part of a
sync(2) that ran in the flusher.
"""

from __future__ import annotations

from advisor.store.ddl import ident
from advisor.views.model import Column, Source, View
from advisor.views.present import Present
from advisor.views.spans import SPAN_COLUMNS, span_sql, syscall_events, syscall_source

# BTRFS_IOC_SNAP_CREATE = _IOW(0x94, 1, struct btrfs_ioctl_vol_args) = 0x50009401,
# BTRFS_IOC_SNAP_CREATE_V2 = _IOW(0x94, 23, struct btrfs_ioctl_vol_args_v2) = 0x50009417.
SNAPSHOT_IOCTLS = {0x50009401: "BTRFS_IOC_SNAP_CREATE", 0x50009417: "BTRFS_IOC_SNAP_CREATE_V2"}
# The ioctl's cmd is an unsigned int in the kernel; sys_enter_ioctl records it as an
# unsigned long, so 0x50009417 reads as 1342215191 whatever the sign convention.
_SNAPSHOT_WHERE = f"cmd IN ({', '.join(str(c) for c in SNAPSHOT_IOCTLS)})"

# Events recorded inside fsync(2), naming the file: pid, ts, ino. The filesystems' own,
# and sb_mark_inode_writeback, which any filesystem's fsync fires in the caller's context
# as the file's first page goes under writeback (folio_start_writeback).
FSYNC_FILE_EVENTS = ("btrfs:btrfs_sync_file", "ext4:ext4_sync_file_enter", "xfs:xfs_file_fsync",
                     "writeback:sb_mark_inode_writeback")


# The event at the start of each filesystem's fsync, naming the filesystem.
FSYNC_FS_EVENTS = {"btrfs:btrfs_sync_file": "btrfs", "ext4:ext4_sync_file_enter": "ext4", "xfs:xfs_file_fsync": "xfs"}


def _fsync_with_file(tables: list[str], present: Present) -> str:
    """fsync spans, each with the inode an event inside the call names (fsync takes a
    file descriptor; btrfs_sync_file, ext4_sync_file_enter, xfs_file_fsync or the
    caller's sb_mark_inode_writeback say which inode it was), and its filesystem."""
    spans = span_sql(("fsync", "fdatasync"), present, extra=("fd",))
    files = [f"SELECT pid, ts, CAST(ino AS UBIGINT) AS ino FROM {ident(present.find(e)[0])}"
             for e in FSYNC_FILE_EVENTS if present.has_fields(e, ("ino",))]
    sql = (f"SELECT s.*, CASE WHEN f.ts <= s.end_ts THEN f.ino END AS ino FROM ({spans}) s "
           f"ASOF LEFT JOIN ({' UNION ALL '.join(files)}) f ON f.pid = s.pid AND f.ts >= s.start_ts"
           if files else f"SELECT *, NULL::UBIGINT AS ino FROM ({spans})")
    return _with_fs(sql, present)


def _with_fs(spans: str, present: Present) -> str:
    """`fs`: the filesystem whose fsync event fell inside the call; "other" when the
    capture recorded some filesystems' fsync events and none fell inside (a btrfs
    capture's fsyncs of files on the root ext4: btrfs_sync_file recorded, and not in
    them); NULL when it cannot tell (none recorded, or the call's end not seen)."""
    named = [(present.find(e)[0], fs) for e, fs in FSYNC_FS_EVENTS.items() if present.recorded(e)]
    if not named:
        return f"SELECT *, NULL::VARCHAR AS fs FROM ({spans})"
    events = " UNION ALL ".join(f"SELECT pid, ts, '{fs}' AS fs FROM {ident(t)}" for t, fs in named)
    return f"""SELECT s.*, CASE WHEN s.end_ts IS NULL THEN NULL WHEN g.ts <= s.end_ts THEN g.fs ELSE 'other' END AS fs
               FROM ({spans}) s ASOF LEFT JOIN ({events}) g ON g.pid = s.pid AND g.ts >= s.start_ts"""


def _ext4_fsyncs(tables: list[str], present: Present) -> str:
    """ext4_sync_file_enter/exit bracket ext4_sync_file: the fsync's filesystem part."""
    enter, exit_ = tables
    return f"""
        SELECT e.pid, e.tgid, e.comm, CASE WHEN e.datasync <> 0 THEN 'fdatasync' ELSE 'fsync' END AS syscall,
               e.ts AS start_ts, x.ts AS end_ts, x.ts - e.ts AS dur_ns, x.ret AS ret, x.ts IS NOT NULL AS complete,
               CAST(e.ino AS UBIGINT) AS ino, 'ext4' AS fs
        FROM {enter} e ASOF LEFT JOIN {exit_} x ON x.pid = e.pid AND x.ts >= e.ts"""


def _fsync_calls(fs: str, datasync: bool):
    """Calls only, from an event at the start of the filesystem's fsync."""
    call = "CASE WHEN datasync <> 0 THEN 'fdatasync' ELSE 'fsync' END" if datasync else "'fsync or fdatasync'"

    def sql(tables: list[str], present: Present) -> str:
        return (f"SELECT pid, tgid, comm, {call} AS syscall, ts AS start_ts, false AS complete, CAST(ino AS UBIGINT) AS ino, "
                f"'{fs}' AS fs FROM {tables[0]}")
    return sql


_CALLS_ONLY = ("pid", "tgid", "comm", "syscall", "start_ts", "complete", "ino", "fs")

FSYNC_OPS = View(
    "fsync_ops",
    "fsync(2) and fdatasync(2) calls, entry to return",
    SPAN_COLUMNS + (Column("fd", "BIGINT", "the file descriptor"),
                    Column("ino", "UBIGINT", "the inode synced, when a filesystem event inside the call names it"),
                    Column("fs", "VARCHAR", "btrfs, ext4 or xfs: the filesystem whose fsync event fell inside the call; "
                                            "'other' when the capture recorded such events and none fell inside")),
    (
        Source("syscalls fsync/fdatasync", syscall_events(("fsync", "fdatasync")), _fsync_with_file,
               optional=(("ino", "@" + "|".join(FSYNC_FILE_EVENTS)), ("fs", "@" + "|".join(FSYNC_FS_EVENTS))),
               recording=("syscalls:sys_enter_fsync", "syscalls:sys_exit_fsync", "syscalls:sys_enter_fdatasync",
                                            "syscalls:sys_exit_fdatasync", "btrfs:btrfs_sync_file")),
        Source("ext4_sync_file_enter/exit", (("ext4:ext4_sync_file_enter",), ("ext4:ext4_sync_file_exit",)), _ext4_fsyncs,
               fields=(("ino", "datasync"), ("ret",)),
               provides=("pid", "tgid", "comm", "syscall", "start_ts", "end_ts", "dur_ns", "ret", "complete", "ino", "fs"),
               lacks="ext4 fsyncs only, from ext4_sync_file_enter to _exit (the syscall's own entry and return were not recorded)"),
        Source("btrfs_sync_file", (("btrfs:btrfs_sync_file",),), _fsync_calls("btrfs", True), fields=(("ino", "datasync"),), provides=_CALLS_ONLY,
               lacks="btrfs fsyncs as calls only: btrfs_sync_file marks the start, nothing the return, so no durations "
                     "(record syscalls:sys_enter_fsync/sys_exit_fsync for them)"),
        Source("xfs_file_fsync", (("xfs:xfs_file_fsync",),), _fsync_calls("xfs", False), fields=(("ino",),), provides=_CALLS_ONLY,
               lacks="XFS fsyncs as calls only: xfs_file_fsync marks the start, nothing the return, so no durations "
                     "(record syscalls:sys_enter_fsync/sys_exit_fsync for them)"),
    ),
)


def _flusher_sync_work(tables: list[str], present: Present) -> str:
    """A sync(2) hands the flusher a WB_SYNC_ALL work item with reason "sync"
    (sync_inodes_sb → bdi_split_work_to_wbs), traced by writeback_start and
    writeback_written around wb_writeback."""
    start, done = tables
    return f"""
        SELECT st.pid, st.tgid, st.comm, 'sync' AS syscall, st.ts AS start_ts, dn.ts AS end_ts, dn.ts - st.ts AS dur_ns,
               dn.ts IS NOT NULL AS complete
        FROM (SELECT * FROM {start} WHERE sync_mode = 1 AND wb_reason('writeback_start', reason) = 'sync') st
        ASOF LEFT JOIN (SELECT ts, pid, sync_mode FROM {done}) dn ON dn.pid = st.pid AND dn.sync_mode = st.sync_mode AND dn.ts >= st.ts"""


SYNC_OPS = View(
    "sync_ops",
    "sync(2) and syncfs(2) calls, entry to return",
    SPAN_COLUMNS + (Column("fd", "BIGINT", "syncfs's file descriptor"),),
    (
        syscall_source(("sync", "syncfs"), extra=("fd",)),
        Source("flusher WB_SYNC_ALL work (reason sync)", (("writeback:writeback_start",), ("writeback:writeback_written",)),
               _flusher_sync_work, fields=(("sync_mode", "reason"), ("sync_mode",)),
               provides=("pid", "tgid", "comm", "syscall", "start_ts", "end_ts", "dur_ns", "complete"),
               lacks="the flusher's part of each sync only (its WB_SYNC_ALL work): not the caller's own waits nor the "
                     "filesystem's commit, and pid is the flusher's (record syscalls:sys_enter_sync/sys_exit_sync for the calls)"),
    ),
)


def _snapshots(tables: list[str], present: Present) -> str:
    spans = span_sql(("ioctl",), present, _SNAPSHOT_WHERE, extra=("fd", "cmd"))
    names = " ".join(f"WHEN {c} THEN '{n}'" for c, n in SNAPSHOT_IOCTLS.items())
    return f"SELECT *, CASE cmd {names} END AS cmd_name FROM ({spans})"


SNAPSHOT_OPS = View(
    "snapshot_ops",
    "btrfs snapshot creation ioctls (BTRFS_IOC_SNAP_CREATE, _V2), entry to return",
    SPAN_COLUMNS + (Column("fd", "BIGINT", "the destination directory's file descriptor"),
                    Column("cmd", "UBIGINT", "the ioctl number"),
                    Column("cmd_name", "VARCHAR", "its name")),
    (Source("syscalls ioctl", syscall_events(("ioctl",)), _snapshots, fields=(("cmd",), ()),
            recording=("syscalls:sys_enter_ioctl", "syscalls:sys_exit_ioctl")),),
)

WRITE_OPS = View(
    "write_ops",
    "write(2) family calls (write, pwrite64, writev, pwritev, pwritev2), entry to return",
    SPAN_COLUMNS + (Column("fd", "BIGINT", "the file descriptor"), Column("count", "BIGINT", "bytes asked to write (write, pwrite64)")),
    (syscall_source(("write", "pwrite64", "writev", "pwritev", "pwritev2"), extra=("fd", "count")),),
)

SYNC_FILE_RANGE_OPS = View(
    "sync_file_range_ops",
    "sync_file_range(2) calls, entry to return",
    SPAN_COLUMNS + (Column("fd", "BIGINT", "the file descriptor"),),
    (syscall_source(("sync_file_range",), extra=("fd",)),),
)

VIEWS = (SYNC_OPS, FSYNC_OPS, SNAPSHOT_OPS, WRITE_OPS, SYNC_FILE_RANGE_OPS)
