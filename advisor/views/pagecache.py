"""The page cache: pages dirtied, pages and inodes written back, the flusher's work,
waits on pages under writeback, the global dirty counters.

Kernels renamed these events: 5.16 `writeback_dirty_page` → `writeback_dirty_folio` and
`wait_on_page_writeback` → `folio_wait_writeback`; 6.x btrfs `__extent_writepage` →
`extent_writepage`. Each view lists every name; the capture's own is used.
"""

from __future__ import annotations

from advisor.views.model import Column, Source, View
from advisor.views.present import Present

_TS = Column("ts", "BIGINT", "ns on the capture's clock")
_TASK = (Column("pid", "INTEGER", "the task"), Column("comm", "VARCHAR", "its name"))


def _select(cols: str):
    """A source that reads one table: SELECT cols FROM it."""
    return lambda tables, present: f"SELECT {cols} FROM {tables[0]}"


DIRTYING = View(
    "dirtying",
    "pages (folios) dirtied: one row per folio made dirty",
    (_TS, *_TASK, Column("bdi", "VARCHAR", "the backing device's name (btrfs-1, 7:0)"),
     Column("ino", "UBIGINT", "inode"), Column("index", "UBIGINT", "page index in the file (x page size = offset)")),
    (Source("writeback_dirty_folio", (("writeback:writeback_dirty_folio", "writeback:writeback_dirty_page"),),
            lambda t, p: f'SELECT ts, pid, comm, {t[0].opt("name", "bdi")}, ino, "index" FROM {t[0]}',
            fields=(("ino", "index"),), optional=(("bdi", "name"),),
            lacks="the folio's size (one event per folio: a 16 KiB folio counts once)"),),
)


def _page_index(t) -> str:
    """The page's index: the format's field `index`, printed as "page_index=" (a text
    capture keeps the printed name: `root=256(-) ino=257 page_index=0 nr_to_write=...`)."""
    return t.first("index", "UBIGINT", "index", "page_index")


def _extent_writepage(tables, present: Present) -> str:
    t = tables[0]
    # The text prints the root through show_root_type: "256(-)", "5(FS_TREE)".
    root = ("root_objectid" if t.has("root_objectid")
            else "TRY_CAST(regexp_extract(CAST(root AS VARCHAR), '^([0-9]+)', 1) AS UBIGINT)")
    return f"SELECT ts, pid, comm, ino, {_page_index(t)}, {root} AS root, CAST(nr_to_write AS BIGINT) AS nr_to_write FROM {t}"


PAGES_WRITTEN = View(
    "pages_written",
    "pages written back, one row per page (btrfs extent_writepage)",
    (_TS, *_TASK, Column("ino", "UBIGINT", "inode"), Column("index", "UBIGINT", "page index"),
     Column("root", "UBIGINT", "btrfs subvolume (root objectid)"),
     Column("nr_to_write", "BIGINT", "the page budget left in the writeback_control when the page was written: a "
            "bounded pass counts down from its chunk (1024, 11264); a whole-file flush (fsync, sync, filemap_flush) "
            "from LONG_MAX (9223372036854775807)")),
    (Source("extent_writepage", (("btrfs:extent_writepage", "btrfs:__extent_writepage"),), _extent_writepage,
            fields=(("ino", "index|page_index", "root_objectid|root", "nr_to_write"),)),
     Source("extent_writepage", (("btrfs:extent_writepage", "btrfs:__extent_writepage"),),
            lambda t, p: f"SELECT ts, pid, comm, ino, {_page_index(t[0])} FROM {t[0]}", fields=(("ino", "index|page_index"),),
            provides=("ts", "pid", "comm", "ino", "index"),
            lacks="the subvolume of each page and the writeback budget it was written under")),
)


def _inode_written(tables, present: Present) -> str:
    t = tables[0]
    return (f"SELECT ts, pid, comm, {t.opt('name', 'bdi')}, ino, {t.opt('wrote', type_='BIGINT')}, "
            f"{t.first('nr_to_write', 'BIGINT', 'nr_to_write', 'to_write')}, "
            f"{t.first('writeback_index', 'UBIGINT', 'writeback_index', 'index')}, {_i_state(t)}, 'written' AS kind FROM {t}")


def _i_state(t) -> str:
    """The inode's i_state after the pass, and its flag names as trace-cmd prints them
    (state=I_SYNC|0x20000: bits the format does not name in hex). A text capture prints
    only the names: i_state is NULL there and i_state_name the printed text."""
    if not t.has("state"):
        return "NULL::UBIGINT AS i_state, NULL::VARCHAR AS i_state_name"
    return "TRY_CAST(state AS UBIGINT) AS i_state, flag_names('writeback_single_inode', 'state', state) AS i_state_name"


def _inode_completed(tables, present: Present) -> str:
    return f"SELECT ts, pid, comm, {_sb_dev(tables[0])}, ino, 'completed' AS kind FROM {tables[0]}"


def _inode_marked(tables, present: Present) -> str:
    return f"SELECT ts, pid, comm, {_sb_dev(tables[0])}, ino, 'marked' AS kind FROM {tables[0]}"


def _sb_dev(t) -> str:
    """The superblock's device as major:minor: "7:0" for the kernel's 7340032, as the bdi of
    a block-device filesystem is named (btrfs's is an anonymous 0:NN, its bdi btrfs-N)."""
    if not t.has("dev"):
        return "NULL::VARCHAR AS dev"
    return "CASE WHEN TRY_CAST(dev AS UBIGINT) IS NOT NULL THEN dev_name(dev) END AS dev"


INODE_WRITEBACK = View(
    "inode_writeback",
    "inodes written back: by the writeback code (kind 'written', writeback_single_inode), "
    "seen leaving writeback when their IO completed (kind 'completed', sb_clear_inode_writeback), "
    "or seen entering it as a first page was put under writeback, in the context of whoever did it "
    "(kind 'marked', sb_mark_inode_writeback)",
    (_TS, *_TASK, Column("bdi", "VARCHAR", "backing device"), Column("ino", "UBIGINT", "inode"),
     Column("wrote", "BIGINT", "pages written in this pass"), Column("nr_to_write", "BIGINT", "pages left to write in the work"),
     Column("writeback_index", "UBIGINT", "where the next cyclic pass starts (page index)"),
     Column("i_state", "UBIGINT", "the inode's state bits after the pass (I_DIRTY_PAGES 0x4, I_SYNC 0x80, ...)"),
     Column("i_state_name", "VARCHAR", "their names as trace-cmd prints them, from the capture's own print format"),
     Column("kind", "VARCHAR", "'written', 'completed' or 'marked'"),
     Column("dev", "VARCHAR", "the superblock's device, major:minor ('completed' and 'marked' rows: 7:0 for ext4 or "
            "XFS on /dev/loop0, as its bdi is named; btrfs's is an anonymous 0:NN)")),
    (Source("writeback_single_inode", (("writeback:writeback_single_inode",),), _inode_written, fields=(("ino",),),
            provides=("ts", "pid", "comm", "bdi", "ino", "wrote", "nr_to_write", "writeback_index", "i_state", "i_state_name", "kind"),
            optional=(("bdi", "name"), ("wrote", "wrote"), ("nr_to_write", "nr_to_write|to_write"),
                      ("writeback_index", "writeback_index|index"), ("i_state", "state"), ("i_state_name", "state"))),
     Source("sb_clear_inode_writeback", (("writeback:sb_clear_inode_writeback",),), _inode_completed, fields=(("ino",),),
            provides=("ts", "pid", "comm", "ino", "kind", "dev"), optional=(("dev", "dev"),),
            lacks="completions only: who wrote the inode and how many pages are not shown"),
     # Fires only when an inode with no page under writeback gets one: a submission while
     # the inode's earlier IO is in flight shows no mark.
     Source("sb_mark_inode_writeback", (("writeback:sb_mark_inode_writeback",),), _inode_marked, fields=(("ino",),),
            provides=("ts", "pid", "comm", "ino", "kind", "dev"), optional=(("dev", "dev"),),
            lacks="starts only, and only of an inode with no page already under writeback: how many pages are not shown")),
    combines=True,
)


def _works(tables, present: Present) -> str:
    """writeback_start / writeback_written bracket one work item in wb_writeback(); a
    flusher worker runs one at a time, so a start pairs with the next written of the same
    pid. Text captures print reason by name and kupdate/background for the for_ fields."""
    st, dn = tables
    return f"""
        SELECT st.pid, st.comm, st.bdi, st.sync_mode,
               CASE st.sync_mode WHEN 1 THEN 'WB_SYNC_ALL' WHEN 0 THEN 'WB_SYNC_NONE' END AS sync_mode_name,
               TRY_CAST(st.reason AS INTEGER) AS reason, wb_reason('writeback_start', st.reason) AS reason_name,
               st.for_kupdate, st.for_background, st.range_cyclic, st.nr_pages,
               st.ts AS start_ts, dn.ts AS end_ts, dn.ts - st.ts AS dur_ns
        FROM (SELECT ts, pid, comm, {st.opt('name', 'bdi')}, sync_mode, reason,
                     {st.first('for_kupdate', 'INTEGER', 'for_kupdate', 'kupdate')},
                     {st.first('for_background', 'INTEGER', 'for_background', 'background')},
                     {st.opt('range_cyclic', type_='INTEGER')}, {st.opt('nr_pages', type_='BIGINT')} FROM {st}) st
        ASOF LEFT JOIN (SELECT ts, pid, sync_mode FROM {dn}) dn ON dn.pid = st.pid AND dn.sync_mode = st.sync_mode AND dn.ts >= st.ts"""


WRITEBACK_WORKS = View(
    "writeback_works",
    "the flusher's work items (background, periodic, sync ...), start to end",
    (*_TASK, Column("bdi", "VARCHAR", "backing device"), Column("sync_mode", "INTEGER", "0 WB_SYNC_NONE, 1 WB_SYNC_ALL"),
     Column("sync_mode_name", "VARCHAR", "WB_SYNC_NONE or WB_SYNC_ALL"),
     Column("reason", "INTEGER", "enum wb_reason as recorded"), Column("reason_name", "VARCHAR", "its name (background, sync, ...)"),
     Column("for_kupdate", "INTEGER", "periodic writeback"), Column("for_background", "INTEGER", "background writeback"),
     Column("range_cyclic", "INTEGER", "cyclic pass"), Column("nr_pages", "BIGINT", "pages the work asks for"),
     Column("start_ts", "BIGINT", "writeback_start, ns"), Column("end_ts", "BIGINT", "writeback_written, ns"),
     Column("dur_ns", "BIGINT", "end_ts - start_ts")),
    (Source("writeback_start/writeback_written", (("writeback:writeback_start",), ("writeback:writeback_written",)), _works,
            fields=(("sync_mode", "reason"), ("sync_mode",)), optional=(("bdi", "name"), ("nr_pages", "nr_pages"))),),
)


PAGE_WAITS = View(
    "page_waits",
    "a task waiting for a page under writeback (folio_wait_writeback)",
    (_TS, *_TASK, Column("bdi", "VARCHAR", "backing device"), Column("ino", "UBIGINT", "inode"), Column("index", "UBIGINT", "page index")),
    (Source("folio_wait_writeback", (("writeback:folio_wait_writeback", "writeback:wait_on_page_writeback"),),
            lambda t, p: f'SELECT ts, pid, comm, {t[0].opt("name", "bdi")}, {t[0].opt("ino", type_="UBIGINT")}, '
                         f'{t[0].opt("index", type_="UBIGINT")} FROM {t[0]}',
            optional=(("bdi", "name"), ("ino", "ino"), ("index", "index"))),),
)

# struct field → the name global_dirty_state's print format gives it
_DIRTY_COUNTS = {"nr_dirty": "dirty", "nr_writeback": "writeback", "background_thresh": "bg_thresh", "dirty_thresh": "thresh",
                 "dirty_limit": "limit", "nr_dirtied": "dirtied", "nr_written": "written"}

def _dirty_state(tables, present: Present) -> str:
    # global_dirty_state's print format names its fields differently ("dirty=%lu
    # writeback=%lu bg_thresh=%lu thresh=%lu limit=%lu dirtied=%lu written=%lu"):
    # text captures keep the printed names.
    t = tables[0]
    return "SELECT ts, " + ", ".join(t.first(c, "UBIGINT", c, printed) for c, printed in _DIRTY_COUNTS.items()) + f" FROM {t}"


DIRTY_STATE = View(
    "dirty_state",
    "the global dirty page counters and limits (global_dirty_state), in pages",
    (_TS, *(Column(c, "UBIGINT", "pages") for c in _DIRTY_COUNTS)),
    (Source("global_dirty_state", (("writeback:global_dirty_state",),), _dirty_state,
            optional=tuple((c, f"{c}|{printed}") for c, printed in _DIRTY_COUNTS.items())),),
)

# `pause` is how long balance_dirty_pages() put the writer to sleep, in ms (the tracepoint
# converts jiffies: pause * 1000 / HZ); 0: not throttled this time.
THROTTLING = View(
    "throttling",
    "writers throttled by balance_dirty_pages (dirty-page limits)",
    (_TS, *_TASK, Column("bdi", "VARCHAR", "backing device"), Column("pause_ms", "BIGINT", "how long the writer was put to sleep, ms"),
     Column("dirty_ratelimit", "UBIGINT", "the bdi's dirty rate limit, KiB/s")),
    (Source("balance_dirty_pages", (("writeback:balance_dirty_pages",),),
            lambda t, p: f"SELECT ts, pid, comm, {t[0].opt('bdi')}, pause AS pause_ms, {t[0].opt('dirty_ratelimit', type_='UBIGINT')} FROM {t[0]}",
            fields=(("pause",),), optional=(("bdi", "bdi"), ("dirty_ratelimit", "dirty_ratelimit"))),),
)

EXECS = View(
    "execs",
    "programs tasks executed (sched_process_exec)",
    (_TS, Column("pid", "INTEGER", "the task"), Column("filename", "VARCHAR", "the program executed")),
    (Source("sched_process_exec", (("sched:sched_process_exec",),), _select("ts, pid, filename"), fields=(("filename",),)),),
)

# An inode's page cache goes with it when it is evicted (evict → truncate_inode_pages_final):
# its dirty pages are dropped, never written. An inode with dirty pages is evicted only
# once deleted (its last link and reference gone) or at unmount, after the unmount's sync:
# the inode LRU skips dirty inodes (inode_lru_isolate). dbench deletes what it writes
# (`ext4_evict_inode: dev 7,0 ino 281 nlink 0`, a median 21 ms after the file's last page
# was dirtied), and its inode numbers come back for the next files: 16,474 evictions of
# 322 inode numbers in 4 s.
INODE_EVICTIONS = View(
    "inode_evictions",
    "inodes evicted from memory, their page cache dropped: a deleted file's dirty pages are never written",
    (_TS, *_TASK, Column("ino", "UBIGINT", "inode"), Column("fs", "VARCHAR", "the filesystem whose event it is")),
    (Source("ext4_evict_inode", (("ext4:ext4_evict_inode",),), _select("ts, pid, comm, ino, 'ext4' AS fs"), fields=(("ino",),)),
     Source("xfs_destroy_inode", (("xfs:xfs_destroy_inode",),), _select("ts, pid, comm, ino, 'xfs' AS fs"), fields=(("ino",),)),
     Source("btrfs_inode_evict", (("btrfs:btrfs_inode_evict",),), _select("ts, pid, comm, ino, 'btrfs' AS fs"), fields=(("ino",),))),
    combines=True,
)

# __mark_inode_dirty puts an inode that was clean on its writeback's b_dirty (or
# b_dirty_time) list and fires this; a sync writes every inode on those lists, pages or
# not. Under dbench on ext4, 60 of the 331 inodes a sync wrote had no page dirty, only
# their metadata (a directory's times, a renamed file):
#   dbench-28275 [001] 43537.112562: writeback_dirty_inode_enqueue: dev 7,0 ino 131074 dirtied 4305776512 state 0x10 mode 040700
INODES_ENQUEUED = View(
    "inodes_enqueued",
    "inodes put on their writeback's dirty lists as they turn dirty, through their pages or only their metadata",
    (_TS, *_TASK, Column("dev", "VARCHAR", "the superblock's device (7:0 as the kernel's number, 7340032)"),
     Column("ino", "UBIGINT", "inode")),
    (Source("writeback_dirty_inode_enqueue", (("writeback:writeback_dirty_inode_enqueue",),),
            _select("ts, pid, comm, CAST(dev AS VARCHAR) AS dev, ino"), fields=(("dev", "ino"),)),),
)

VIEWS = (DIRTYING, PAGES_WRITTEN, INODE_WRITEBACK, INODE_EVICTIONS, INODES_ENQUEUED, WRITEBACK_WORKS, PAGE_WAITS, DIRTY_STATE,
         THROTTLING, EXECS)
