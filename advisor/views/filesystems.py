"""Filesystem activity: btrfs space-reclaim flushing, transaction and journal commits,
->sync_fs calls, and which filesystems the capture shows at all.

btrfs registers a bdi of its own per filesystem, named "btrfs-N"; ext4 and XFS write
through the block device's bdi, named "MAJ:MIN" (7:0 for /dev/loop0). So the bdi names
in writeback events tell a btrfs capture from another even when no btrfs event was
recorded; a filesystem's own events (btrfs:*, ext4:*/jbd2:*, xfs:*) name it outright.
A filesystem without a device (tmpfs, proc, pipes: the kernel's noop bdi) is printed as
"(unknown)", e.g. `writeback_mark_inode_dirty: bdi (unknown): ino=24 state=I_DIRTY_SYNC`
from fio touching a file in /dev/shm; it is no block-device filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from advisor.store.ddl import ident
from advisor.views.model import Column, Source, Table, View
from advisor.views.present import Present

# Which steps flush delalloc, by the state's name in the capture's own print format
# (FLUSH_DELALLOC is 5 in 5.10 and 6.18, but enum values move between kernels). A capture
# without print formats (text printed with -R: `state=5`) keeps the number as its name:
# 5 (FLUSH_DELALLOC) and 6 (FLUSH_DELALLOC_WAIT) hold in both numberings, but 7 is
# ALLOC_CHUNK in 5.10 and FLUSH_DELALLOC_FULL once 03fe78cc2942 added that state (6.18
# then has ALLOC_CHUNK_FORCE at 9, not 8), so an unnamed 7 is not taken as delalloc.
_FLUSH_SPACE = """
SELECT *, state_name LIKE 'FLUSH_DELALLOC%' OR (state_name = CAST(state AS VARCHAR) AND state IN (5, 6)) AS delalloc
FROM (SELECT ts, pid, comm, CAST(num(flags) AS UBIGINT) AS flags, flag_names('btrfs_flush_space', 'flags', flags) AS flags_name,
             num_bytes, num(state) AS state, sym('btrfs_flush_space', 'state', state) AS state_name, ret,
             lag(ts) OVER (PARTITION BY pid ORDER BY ts) AS prev_ts
      FROM {t})"""

FLUSH_SPACE = View(
    "flush_space",
    "btrfs space-reclaim flush steps (btrfs_flush_space, traced when a step ends)",
    (Column("ts", "BIGINT", "the step's end, ns"), Column("pid", "INTEGER", "the flushing task"), Column("comm", "VARCHAR", "its name"),
     Column("flags", "UBIGINT", "space kind (data / metadata / system), block group flag bits"),
     Column("flags_name", "VARCHAR", "their names as trace-cmd prints them (METADATA, DATA|METADATA), from the capture's own print format"),
     Column("num_bytes", "UBIGINT", "bytes the step was asked to free; 18446744073709551615 ((u64)-1): as much as there is"),
     Column("state", "BIGINT", "flush state as recorded"),
     Column("state_name", "VARCHAR", "its name (FLUSH_DELALLOC, ALLOC_CHUNK, ...), from the capture's own print format"),
     Column("ret", "INTEGER", "the step's result"),
     Column("prev_ts", "BIGINT", "the same task's previous step, ns: the latest this step can have begun"),
     Column("delalloc", "BOOLEAN", "a step that flushes delalloc (FLUSH_DELALLOC, _WAIT, _FULL; where the capture does not name "
            "the states, 5 and 6, whose numbers all kernels share)")),
    (Source("btrfs_flush_space", (("btrfs:btrfs_flush_space",),), lambda t, p: _FLUSH_SPACE.format(t=t[0]),
            fields=(("flags", "num_bytes", "state", "ret"),)),),
)


def _btrfs_commits(tables: list[Table], present: Present) -> str:
    # The print format names the generation "gen", which a text capture keeps:
    #   kworker/u8:8-17198 [000] 43019.134010: btrfs_transaction_commit: 8ed200da-...: root=1(ROOT_TREE) gen=9
    t = tables[0]
    generation = ident("generation" if t.has("generation") else "gen")
    return (f"SELECT 'btrfs' AS fs, NULL::BIGINT AS start_ts, ts AS end_ts, NULL::BIGINT AS dur_ns, pid, comm, "
            f"CAST({generation} AS UBIGINT) AS transaction FROM {t}")


def _jbd2_commits(tables: list[str], present: Present) -> str:
    start, end = tables
    return f"""
        SELECT 'ext4' AS fs, s.ts AS start_ts, e.ts AS end_ts, e.ts - s.ts AS dur_ns, s.pid, s.comm, CAST(s.transaction AS UBIGINT) AS transaction
        FROM {start} s LEFT JOIN {end} e ON e.dev = s.dev AND e.transaction = s.transaction AND e.ts >= s.ts"""


COMMITS = View(
    "commits",
    "filesystem commits: btrfs transaction commits (their end) and ext4 journal (jbd2) commits",
    (Column("fs", "VARCHAR", "btrfs or ext4"), Column("start_ts", "BIGINT", "commit start, ns (jbd2 only)"),
     Column("end_ts", "BIGINT", "commit end, ns"), Column("dur_ns", "BIGINT", "end_ts - start_ts (jbd2 only)"),
     Column("pid", "INTEGER", "the committing task"), Column("comm", "VARCHAR", "its name"),
     Column("transaction", "UBIGINT", "transaction id / generation")),
    (Source("btrfs_transaction_commit", (("btrfs:btrfs_transaction_commit",),), _btrfs_commits, fields=(("generation|gen",),),
            lacks="btrfs commits' start (btrfs_transaction_commit fires as a commit ends)"),
     Source("jbd2 commits", (("jbd2:jbd2_start_commit",), ("jbd2:jbd2_end_commit",)), _jbd2_commits,
            fields=(("dev", "transaction"), ("dev", "transaction")))),
    combines=True,
)

# sync(2) and syncfs(2) call each filesystem's ->sync_fs once its inodes are written and
# their pages waited for (sync_inodes_sb): first with wait=0 for every superblock, then
# with wait=1. On ext4 that is a journal commit and a cache flush, the same whichever way
# the flusher wrote the inodes. ext4 traces the entry (dev 7,0 is 7340032 as recorded):
#   sync-28286 [000] 43540.757270: ext4_sync_fs: dev 254,0 wait 0
#   sync-28286 [000] 43540.757279: ext4_sync_fs: dev 7,0 wait 0
# btrfs traces the entry too, naming the filesystem by its fsid, not a device; its
# wait=0 call only starts writing the btree inode, the wait=1 call commits the transaction:
#   sync-17734 [001] 43021.333632: btrfs_sync_fs: 8ed200da-e4bc-40dc-98e7-cb181ad593b3: wait=0
#   sync-17734 [001] 43021.338477: btrfs_sync_fs: 8ed200da-e4bc-40dc-98e7-cb181ad593b3: wait=1
SYNC_FS_CALLS = View(
    "sync_fs_calls",
    "a filesystem's ->sync_fs, called by sync(2) and syncfs(2) once the inodes are written (ext4: a journal commit; btrfs: a transaction commit)",
    (Column("ts", "BIGINT", "entry, ns"), Column("pid", "INTEGER", "the calling task"), Column("comm", "VARCHAR", "its name"),
     Column("dev", "VARCHAR", "the superblock's device (7:0 as the kernel's number, 7340032)"),
     Column("wait", "INTEGER", "1: the call waits for the commit"), Column("fs", "VARCHAR", "the filesystem whose event it is")),
    (Source("ext4_sync_fs", (("ext4:ext4_sync_fs",),),
            lambda t, p: f"SELECT ts, pid, comm, CAST(dev AS VARCHAR) AS dev, CAST(wait AS INTEGER) AS wait, 'ext4' AS fs FROM {t[0]}",
            fields=(("dev", "wait"),), lacks="other filesystems' ->sync_fs"),
     Source("btrfs_sync_fs", (("btrfs:btrfs_sync_fs",),),
            lambda t, p: f"SELECT ts, pid, comm, NULL::VARCHAR AS dev, CAST(wait AS INTEGER) AS wait, 'btrfs' AS fs FROM {t[0]}",
            fields=(("wait",),), provides=("ts", "pid", "comm", "wait", "fs"),
            lacks="the filesystem's device (btrfs_sync_fs names it by fsid) and other filesystems' ->sync_fs")),
    combines=True,
)

VIEWS = (FLUSH_SPACE, COMMITS, SYNC_FS_CALLS)

# Events whose bdi name (column `name`) tells btrfs ("btrfs-1") from a block device's bdi.
BDI_EVENTS = frozenset(("writeback:writeback_dirty_folio", "writeback:writeback_dirty_page", "writeback:writeback_single_inode",
               "writeback:writeback_start", "writeback:writeback_written", "writeback:folio_wait_writeback",
               "writeback:writeback_mark_inode_dirty", "writeback:writeback_dirty_inode"))
# bdi_dev_name() of a bdi without a device (mm/backing-dev.c, bdi_unknown_name).
NO_DEVICE_BDI = "(unknown)"
_FS_SYSTEMS = {"btrfs": "btrfs", "ext4": "ext4", "jbd2": "ext4", "xfs": "xfs"}
# Rows read per table to collect bdi names: a capture has a handful of devices.
_BDI_SAMPLE_ROWS = 200_000


@dataclass
class Filesystems:
    """Which filesystems the capture shows, each with its evidence, and the block-device
    bdis whose filesystem it does not name."""

    shown: dict[str, list[str]] = field(default_factory=dict)
    other_bdis: list[str] = field(default_factory=list)
    deviceless: bool = False  # inodes on a bdi without a device ("(unknown)": tmpfs, proc, pipes)
    btrfs_events_recorded: bool = False

    def knows_absent(self, fs: str) -> bool:
        """Can the capture say `fs` was not there? Only when it shows something else,
        or recorded that filesystem's events and none fired."""
        if fs in self.shown:
            return False
        if fs == "btrfs":  # its own bdi names it wherever writeback events are recorded
            return bool(self.shown or self.other_bdis or self.deviceless or self.btrfs_events_recorded)
        # A block-device bdi (7:0) may be this filesystem without its events recorded.
        return bool(self.shown) and not self.other_bdis

    def describe(self) -> str:
        parts = [f"{fs} ({', '.join(ev)})" for fs, ev in sorted(self.shown.items())]
        if self.other_bdis:
            parts.append(f"a block-device filesystem on bdi {', '.join(self.other_bdis)}")
        if self.deviceless:
            parts.append("inodes without a block device (bdi (unknown): tmpfs, proc, pipes)")
        return "; ".join(parts) or "no filesystem activity"


def filesystems(con, present: Present) -> Filesystems:
    out = Filesystems()
    for system, n in present.systems_with_rows().items():
        if system in _FS_SYSTEMS:
            out.shown.setdefault(_FS_SYSTEMS[system], []).append(f"{n:,} {system} events")
    out.btrfs_events_recorded = any(k.startswith("btrfs:") for k in present.tables)
    bdis: set[str] = set()
    for name in sorted(BDI_EVENTS):
        found = present.find(name)
        if found and found[1] and present.has_fields(name, ("name",)):
            # From the stored rows (in capture order), not the event's view, which
            # joins every row with `tasks` for names this does not need.
            rows = con.execute(f"SELECT DISTINCT name FROM (SELECT name FROM raw.{ident(found[0])} LIMIT {_BDI_SAMPLE_ROWS})").fetchall()
            bdis |= {r[0] for r in rows if r[0]}
    btrfs_bdis = sorted(b for b in bdis if b.startswith("btrfs-"))
    if btrfs_bdis:
        out.shown.setdefault("btrfs", []).append(f"bdi {', '.join(btrfs_bdis)}")
    out.deviceless = NO_DEVICE_BDI in bdis
    out.other_bdis = sorted(b for b in bdis if not b.startswith("btrfs-") and b != NO_DEVICE_BDI)
    return out
