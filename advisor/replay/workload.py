"""The replayable form of a capture: what was dirtied when, the sync points, the
flush and reclaim requests, the device — extracted by SQL from the store.

Everything is numpy arrays in time order, so a policy model can run over tens of
millions of dirtying events. `assumptions` lists, in words, what stood in for what
the capture does not show; every replay prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.replay import btrfs_log
from advisor.replay import device as devices
from advisor.replay.device import REQUEST_FIELDS, Device
from advisor.rules.context import Context, Present, create_macros, span_view
from advisor.rules.model import Span
from advisor.store.ddl import ident

# Syscall spans a replay uses: name → (syscalls, filter on the sys_enter fields).
SPANS = {
    "sync": (("sync", "syncfs"), None),
    "fsync": (("fsync", "fdatasync"), None),
    "sync_file_range": (("sync_file_range",), None),
    # BTRFS_IOC_SNAP_CREATE(_V2), as in rules/btrfs-snapshot-livelock.toml.
    "snapshot": (("ioctl",), "cmd IN (1342215169, 1342215191)"),
    "write": (("write", "pwrite64", "writev", "pwritev", "pwritev2"), None),
}
DIRTY_EVENTS = ("writeback_dirty_folio", "writeback_dirty_page")
PAGE_WRITEBACK_EVENTS = ("extent_writepage", "__extent_writepage")
# Events after which an inode's pages dirtied before them are clean (or under writeback).
INODE_WRITTEN_EVENTS = ("writeback_single_inode", "sb_clear_inode_writeback")
PAGE_WAIT_EVENTS = ("folio_wait_writeback", "wait_on_page_writeback")
FILESYSTEMS = ("btrfs", "ext4", "xfs")
# BTRFS_BTREE_INODE_OBJECTID: the inode whose page cache holds btrfs's metadata blocks.
BTRFS_BTREE_INODE = 1
RECLAIM_EVENTS = ("mm_vmscan_direct_reclaim_begin", "mm_vmscan_kswapd_wake", "mm_vmscan_write_folio", "mm_vmscan_writepage")


@dataclass
class Ops:
    """Operations of one kind (sync, fsync, snapshot, ...), one row each."""

    pid: np.ndarray
    start: np.ndarray  # ns
    end: np.ndarray  # ns, -1 when the capture did not see the exit
    ino: np.ndarray  # the inode they act on, -1 when unknown or all

    @classmethod
    def empty(cls) -> "Ops":
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def complete(self) -> np.ndarray:
        return self.end >= 0

    def durations_ns(self) -> np.ndarray:
        return (self.end - self.start)[self.complete]

    def longest(self) -> int:
        """The operation to replay: the longest completed one, else the first."""
        if self.complete.any():
            return int(np.argmax(np.where(self.complete, self.end - self.start, -1)))
        return 0


@dataclass
class FlushRequests:
    """Space-reclaim flushes (btrfs_flush_space): when, which state, bytes asked
    (-1: (u64)-1, "as much as there is", as the priority flushers ask). The event fires
    when the step ends; `since` is when it began at the latest: the same task's previous
    step, or 1 s before (the window rules/btrfs-delalloc-overflush.toml measures)."""

    ts: np.ndarray
    state: list[str]
    num_bytes: np.ndarray
    since: np.ndarray


@dataclass
class MetadataReservations:
    """A synthetic writer whose progress depends on btrfs metadata reservations (the
    closed loop of btrfs-delalloc-overflush): one file after another, each file's data
    dirtied by one write. Sizes and times are per file, in creation order."""

    file_bytes: np.ndarray  # data bytes of each file
    file_cpu_ns: float  # the writer's own time per file (system calls), without waiting
    source_rate: float  # bytes/s the writer's input arrives at (a decompressor in a pipe)
    source_buffer: int  # bytes the input may run ahead of the writer (the pipe's capacity)
    write_rate: float  # bytes/s the writer copies into the page cache
    metadata_free: float  # metadata bytes reservations may take before they wait on a ticket
    hz: int  # CONFIG_HZ: schedule_timeout(1) sleeps until the next tick
    nodesize: int = 16384
    max_inline: int = 2048  # files up to this size are inlined in metadata (no data IO)
    background_bytes: float = float("inf")  # dirty data at which background writeback starts


@dataclass
class Workload:
    source: str
    page_size: int
    start_ts: int
    end_ts: int
    dirty_ts: np.ndarray
    dirty_ino: np.ndarray
    dirty_idx: np.ndarray
    dirty_pid: np.ndarray
    device: Device
    ops: dict[str, Ops] = field(default_factory=dict)
    page_wb_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # page-level writeback
    page_wb_key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_wb_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # inode written
    inode_wb_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    page_waits: int | None = None  # observed waits on page writeback (None: not recorded)
    page_wait_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each wait: when, which task
    page_wait_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    flush: FlushRequests | None = None
    reservations: MetadataReservations | None = None  # synthetic: replay the reservation loop itself
    reclaim_events: int | None = None  # None: reclaim events not recorded
    log_commits: btrfs_log.LogCommits | None = None  # btrfs log commits the capture shows
    # btrfs transaction commits (btrfs_transaction_commit fires as one ends) and the ends of
    # the flusher's writeback works (writeback_written), which bound when a sync's commit
    # began: read only for a btrfs capture with a sync.
    transaction_commit_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    writeback_work_end_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dirty_limit_pages: int | None = None
    # Flusher CPU time per inode written (writepages, bio building), without the IO wait.
    inode_writeback_ns: float = 20_000.0
    # Bytes one dirtying event stands for: a page, or a large folio (see _folio_bytes).
    folio_bytes: int = 4096
    # Metadata the filesystem writes per inode written (inode clusters, log, directories).
    metadata_bytes_per_inode: float = 0.0
    kernel: str | None = None
    stable_writes: bool | None = None
    params: dict = field(default_factory=dict)  # synthetic workloads: their description
    # Filesystems whose events the capture recorded (btrfs, ext4, xfs); None: synthetic.
    filesystems: frozenset[str] | None = None
    assumptions: list[str] = field(default_factory=list)

    @property
    def dirty_key(self) -> np.ndarray:
        return page_key(self.dirty_ino, self.dirty_idx)

    def op(self, kind: str) -> Ops:
        return self.ops.get(kind) or Ops.empty()

    def records(self, filesystem: str) -> bool:
        """Did the capture record this filesystem's events (never, for a synthetic workload)."""
        return filesystem in (self.filesystems or ())

    def summary(self) -> dict:
        return {
            "source": self.source,
            "page_size": self.page_size,
            "span_seconds": round((self.end_ts - self.start_ts) / 1e9, 6),
            "dirtying_events": int(len(self.dirty_ts)),
            "dirtied_bytes": int(len(self.dirty_ts)) * self.folio_bytes,
            "inodes": int(len(np.unique(self.dirty_ino))) if len(self.dirty_ino) else 0,
            "writers": int(len(np.unique(self.dirty_pid))) if len(self.dirty_pid) else 0,
            "operations": {k: len(v) for k, v in sorted(self.ops.items()) if len(v)},
            "flush_requests": 0 if self.flush is None else len(self.flush.ts),
            "reclaim_events": self.reclaim_events,
            "dirty_limit_bytes": None if self.dirty_limit_pages is None else self.dirty_limit_pages * self.page_size,
            "kernel": self.kernel,
            "filesystems": None if self.filesystems is None else sorted(self.filesystems),
            "stable_writes": self.stable_writes,
            "device": self.device.as_dict(),
            "params": self.params,
            "assumptions": list(self.assumptions),
        }


def page_key(ino: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """One sortable int64 per page: inode in the high 32 bits, page index in the low 32
    (2^32 pages of 4 KiB = 16 TiB per file). Sorted keys walk each inode's pages in index
    order, inodes one after another, as a writeback sweep does."""
    return (ino.astype(np.int64) << 32) | (idx.astype(np.int64) & 0xFFFFFFFF)


def from_store(con, source: str, device_override: Device | None = None) -> Workload:
    present = Present.of(con)
    create_macros(con)
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    assumptions: list[str] = []
    page_size = int(info.get("page_size") or 4096)
    if "page_size" not in info:
        assumptions.append("page size 4096 bytes (the capture does not record it)")
    dirty_table = _first(present, DIRTY_EVENTS, con, ("ino", "index"))
    if dirty_table is None:
        z = np.zeros(0, np.int64)
        dirty = {"ts": z, "ino": z, "index": z, "pid": z}
    else:
        dirty = con.execute(
            f'SELECT ts, CAST(ino AS BIGINT) AS ino, CAST("index" AS BIGINT) AS "index", pid FROM {ident(dirty_table)} ORDER BY ts'
        ).fetchnumpy()
    first, last = int(info.get("first_ts") or 0), int(info.get("last_ts") or 0)
    dev = device_override or devices.fit(con)
    if dev is None:
        dev = devices.preset("ssd")
        why = ("the capture's block_rq_issue/complete keep no request fields (a text capture prints them positionally, "
               "not as key=value)" if _first(present, ("block_rq_issue",)) else
               "no write requests in the capture (block_rq_issue/complete or blktrace)")
        assumptions.append(f"{why}: device assumed a SATA SSD (500 MB/s, 50 us per request, queue depth 32)")
    w = Workload(
        source=source,
        page_size=page_size,
        start_ts=first,
        end_ts=last,
        dirty_ts=_i64(dirty["ts"]),
        dirty_ino=_i64(dirty["ino"]),
        dirty_idx=_i64(dirty["index"]),
        dirty_pid=_i64(dirty["pid"]),
        device=dev,
        kernel=info.get("kernel_release") or None,
        assumptions=assumptions,
    )
    w.folio_bytes = page_size
    w.filesystems = frozenset(fs for fs in FILESYSTEMS if any(
        key.startswith(f"{fs}:") or key.split(":", 1)[1].startswith(f"{fs}_") for key in present.tables))
    _ops(con, present, w)
    _log_commits(con, present, w)
    if w.log_commits is not None:
        w.filesystems |= {"btrfs"}
    _writeback(con, present, w)
    _transaction_commits(con, present, w)
    _folio_bytes(con, present, w)
    _pressure(con, present, w)
    return w


def _folio_bytes(con, present: Present, w: Workload) -> None:
    """writeback_dirty_folio fires once per folio and does not say how large the folio is:
    XFS and ext4 (6.x) cache a 16 KiB file in one 16 KiB folio. When the capture's data
    writes (block_rq_issue without RWBS 'M') are clearly more than one page per dirtying,
    each dirtying stands for their mean, rounded to a power of two."""
    issue = _first(present, ("block_rq_issue",), con, REQUEST_FIELDS)
    if not issue or not len(w.dirty_ts):
        return
    data = con.execute(f"SELECT coalesce(sum(CAST(nr_sector AS BIGINT)) * 512, 0) FROM {ident(issue)} "
                       "WHERE rwbs LIKE '%W%' AND rwbs NOT LIKE '%M%'").fetchone()[0]
    per = float(data) / max(1, _written_in_capture(w))
    if per > 1.5 * w.page_size:
        w.folio_bytes = int(min(2 ** round(np.log2(per)), 2 * 1024 * 1024))
        w.assumptions.append(f"one dirtying event = a {w.folio_bytes // 1024} KiB folio: the capture's data writes average "
                             f"{per / 1024:.1f} KiB per dirtying event (the event does not carry the folio size)")


def _written_in_capture(w: Workload) -> int:
    """Dirtying events followed by a writeback of their inode or page within the capture
    (all of them when the capture has no writeback events to tell)."""
    written = np.zeros(len(w.dirty_ts), dtype=bool)
    for keys, ts, of in ((w.inode_wb_ino, w.inode_wb_ts, w.dirty_ino), (w.page_wb_key, w.page_wb_ts, w.dirty_key)):
        if not len(keys):
            continue
        uniq, inv = np.unique(keys, return_inverse=True)
        last = np.full(len(uniq), -1, dtype=np.int64)
        np.maximum.at(last, inv, ts)
        pos = np.minimum(np.searchsorted(uniq, of), len(uniq) - 1)
        written |= (uniq[pos] == of) & (w.dirty_ts <= last[pos])
    have_events = len(w.inode_wb_ts) or len(w.page_wb_ts)
    return int(written.sum()) if have_events else len(w.dirty_ts)


def _first(present: Present, names, con=None, need: tuple[str, ...] = ()) -> str | None:
    """The table of the first of `names` the capture recorded, with the columns `need`.
    A text capture keeps only fields printed as key=value: block_rq_issue prints
    "8,0 WS 4096 () 1234 + 8", sb_clear_inode_writeback "dev 7,0 ino 12 ...", and
    global_dirty_state prints dirty_limit as "limit=", so those tables lack the fields."""
    for n in names:
        found = present.find(f"*:{n}") or next((v for k, v in present.tables.items() if k.endswith(f":{n}")), None)
        if found and (not need or set(need) <= devices.table_columns(con, found[0])):
            return found[0]
    return None


def _i64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


def _ops(con, present: Present, w: Workload) -> None:
    has_dirty = len(w.dirty_ts) > 0
    for kind, (syscalls, where) in SPANS.items():
        ctx = Context()
        span_view(con, Span(name=f"replay_{kind}", syscalls=syscalls, where=where, required=True, why=kind), present, ctx)
        if ctx.missing:
            continue
        view = ident(f"replay_{kind}_spans")
        if kind in ("fsync", "sync_file_range") and has_dirty:
            # fsync(fd) names a file descriptor, not an inode: btrfs_sync_file names it, when
            # recorded, inside the call; otherwise take the inode this task dirtied last
            # before the call (fio's writers fsync what they wrote; dbench's clients often not).
            table = ident(_first(present, DIRTY_EVENTS, con, ("ino", "index")))
            synced = _first(present, ("btrfs_sync_file",), con, ("ino",)) if kind == "fsync" else None
            named, join = "NULL", ""
            if synced:
                join = f"ASOF LEFT JOIN (SELECT pid, ts, ino FROM {ident(synced)}) b ON b.pid = s.pid AND b.ts >= s.start_ts "
                named = "CASE WHEN b.ts <= s.end_ts THEN CAST(b.ino AS BIGINT) END"
            sql = (f"SELECT s.pid, s.start_ts, coalesce(s.end_ts, -1) AS end_ts, coalesce({named}, CAST(d.ino AS BIGINT), -1) AS ino "
                   f"FROM {view} s ASOF LEFT JOIN {table} d ON d.pid = s.pid AND d.ts <= s.start_ts {join}ORDER BY s.start_ts")
            w.assumptions.append(f"{kind}'s file is the inode btrfs_sync_file names inside the call, else the inode its task dirtied last "
                                 "before it (fd → inode is not traced)" if synced else
                                 f"{kind}'s file is the inode its task dirtied last before the call (fd → inode is not traced)")
        else:
            sql = f"SELECT pid, start_ts, coalesce(end_ts, -1) AS end_ts, -1 AS ino FROM {view} ORDER BY start_ts"
        r = con.execute(sql).fetchnumpy()
        if len(r["pid"]):
            w.ops[kind] = Ops(_i64(r["pid"]), _i64(r["start_ts"]), _i64(r["end_ts"]), _i64(r["ino"]))


def _log_commits(con, present: Present, w: Workload) -> None:
    tables = [_first(present, (n,), con, REQUEST_FIELDS) for n in ("block_rq_issue", "block_rq_complete")]
    fsync = w.op("fsync")
    if all(tables) and len(fsync):
        w.log_commits = btrfs_log.observe(con, tuple(ident(t) for t in tables), fsync.pid, fsync.start, fsync.end)
        if w.log_commits is not None:
            w.assumptions.append(w.log_commits.describe())


def _writeback(con, present: Present, w: Workload) -> None:
    t = _first(present, PAGE_WRITEBACK_EVENTS, con, ("ino", "index"))
    if t:
        r = con.execute(f'SELECT ts, CAST(ino AS BIGINT) AS ino, CAST("index" AS BIGINT) AS i FROM {ident(t)} ORDER BY ts').fetchnumpy()
        w.page_wb_ts, w.page_wb_key = _i64(r["ts"]), page_key(_i64(r["ino"]), _i64(r["i"]))
    parts = [f"SELECT ts, CAST(ino AS BIGINT) AS ino FROM {ident(t)}" for t in (_first(present, (n,), con, ("ino",)) for n in INODE_WRITTEN_EVENTS) if t]
    if parts:
        r = con.execute(" UNION ALL ".join(parts) + " ORDER BY ts").fetchnumpy()
        w.inode_wb_ts, w.inode_wb_ino = _i64(r["ts"]), _i64(r["ino"])
    _inode_cost(con, present, w)
    waits = _first(present, PAGE_WAIT_EVENTS)
    if waits:
        r = con.execute(f"SELECT ts, pid FROM {ident(waits)} ORDER BY ts").fetchnumpy()
        w.page_wait_ts, w.page_wait_pid = _i64(r["ts"]), _i64(r["pid"])
        w.page_waits = len(w.page_wait_ts)
        _stable_writes(w)


def _transaction_commits(con, present: Present, w: Workload) -> None:
    """What the sync model takes from a btrfs capture besides the flusher's pass: the
    commit that ends each sync (policies/sync_flusher.py) and the tree blocks' own rate."""
    if not w.records("btrfs") or not len(w.op("sync")):
        return
    for name, attr in (("btrfs_transaction_commit", "transaction_commit_ts"), ("writeback_written", "writeback_work_end_ts")):
        t = _first(present, (name,))
        if t:
            setattr(w, attr, _i64(con.execute(f"SELECT ts FROM {ident(t)} ORDER BY ts").fetchnumpy()["ts"]))
    w.assumptions.append(
        f"the btrfs transaction commit ending a sync is replayed as recorded ({len(w.transaction_commit_ts)} btrfs_transaction_commit "
        "in the capture): the sync policies change the flusher's pass, not the commit" if len(w.transaction_commit_ts) else
        "no btrfs_transaction_commit recorded: the replayed sync leaves out the transaction commit that ends it")
    if w.device.metadata_bandwidth:
        w.assumptions.append(f"btrfs tree blocks written at {w.device.metadata_bandwidth / 1e6:.0f} MB/s, the rate of the capture's "
                             "metadata requests (RWBS M) over their own busy time")


# Flusher CPU per inode: consecutive writeback_single_inode events of one flusher thread
# less than this apart are one burst of submissions (no IO wait between them).
_BURST_GAP_NS = 1_000_000


def _inode_cost(con, present: Present, w: Workload) -> None:
    t = _first(present, ("writeback_single_inode",))
    row = None
    if t:
        row = con.execute(
            f"SELECT median(gap), count(gap) FROM (SELECT ts - lag(ts) OVER (PARTITION BY pid ORDER BY ts) AS gap FROM {ident(t)}) "
            f"WHERE gap > 0 AND gap < {_BURST_GAP_NS}"
        ).fetchone()
    _metadata_per_inode(con, present, w)
    if row and row[1] and row[1] >= 10:
        w.inode_writeback_ns = float(row[0])
        w.assumptions.append(f"flusher CPU per inode {row[0] / 1e3:.1f} us: median gap of {row[1]} back-to-back writeback_single_inode events")
    else:
        w.assumptions.append("flusher CPU per inode 20 us (no writeback_single_inode bursts in the capture; "
                             "sample_traces/sync-xfs-v6.dat shows 23 us on XFS)")


def _metadata_per_inode(con, present: Present, w: Workload) -> None:
    """Metadata-flagged write bytes (RWBS 'M': log, inode clusters) per inode written."""
    issue, wsi = _first(present, ("block_rq_issue",), con, REQUEST_FIELDS), _first(present, ("writeback_single_inode",))
    if not issue or not wsi:
        return
    meta = con.execute(f"SELECT coalesce(sum(CAST(nr_sector AS BIGINT)) * 512, 0) FROM {ident(issue)} WHERE rwbs LIKE '%W%M%'").fetchone()[0]
    inodes = con.execute(f"SELECT count(*) FROM {ident(wsi)}").fetchone()[0]
    if meta and inodes:
        w.metadata_bytes_per_inode = float(meta) / inodes
        w.assumptions.append(f"{w.metadata_bytes_per_inode / 1024:.1f} KiB of metadata writes (RWBS M) per inode written, "
                             "from the capture's block_rq_issue and writeback_single_inode")


def _stable_writes(w: Workload) -> None:
    """From 3.9 writers wait on page writeback only for devices that need stable pages,
    so waits on such a kernel say the device needs them (stable_writes = 1)."""
    from advisor.kernel import parse_release  # noqa: PLC0415 - kernel parsing only when needed

    if not w.page_waits or not w.kernel:
        return
    try:
        release = parse_release(w.kernel)
    except Exception:  # noqa: BLE001 - an unreadable uname leaves it unknown
        return
    if (release.major, release.minor) >= (3, 9):
        w.stable_writes = True
        w.assumptions.append(f"the device needs stable pages: {w.page_waits} waits on page writeback on kernel {w.kernel} (3.9+ waits only then)")


def _pressure(con, present: Present, w: Workload) -> None:
    gds = _first(present, ("global_dirty_state",), con, ("dirty_limit",))
    if gds:
        row = con.execute(f"SELECT median(dirty_limit) FROM {ident(gds)}").fetchone()
        if row and row[0] is not None:
            w.dirty_limit_pages = int(row[0])
    fs = _first(present, ("btrfs_flush_space",), con, ("state", "num_bytes"))
    if fs:
        r = con.execute(f"SELECT ts, coalesce(sym('btrfs_flush_space', 'state', state), CAST(state AS VARCHAR)) AS state, "
                        f"coalesce(TRY_CAST(num_bytes AS BIGINT), -1) AS num_bytes, "
                        f"coalesce(lag(ts) OVER (PARTITION BY pid ORDER BY ts), ts - 1000000000) AS since FROM {ident(fs)} ORDER BY ts").fetchnumpy()
        w.flush = FlushRequests(_i64(r["ts"]), [str(s) for s in r["state"]], _i64(r["num_bytes"]), _i64(r["since"]))
    found = [t for t in (_first(present, (n,)) for n in RECLAIM_EVENTS) if t]
    if found:
        w.reclaim_events = int(sum(con.execute(f"SELECT count(*) FROM {ident(t)}").fetchone()[0] for t in found))
