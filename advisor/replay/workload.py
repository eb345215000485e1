"""The replayable form of a capture: what was dirtied when, the sync points, the
flush and reclaim requests, the device — extracted by SQL from the store.

Everything is numpy arrays in time order, so a policy model can run over tens of
millions of dirtying events. `assumptions` lists, in words, what stood in for what
the capture does not show; every replay prints them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from advisor.display import lost_any, lost_detail
from advisor.replay import btrfs_log, btrfs_returns, folios, redirty, sync_fs
from advisor.replay import device as devices
from advisor.replay.device import Device
from advisor.replay.device_inodes import fit_from_inodes
from advisor.replay.distinct import distinct
from advisor.replay.drain import flusher_cpu_per_inode, merged
from advisor.views import Views, attach, filesystem_pages, filesystem_requests
from advisor.views.coverage import cpu_coverage, lost_facts

# The operations a replay uses: kind → domain view.
OPS_VIEWS = {"sync": "sync_ops", "fsync": "fsync_ops", "sync_file_range": "sync_file_range_ops", "snapshot": "snapshot_ops",
             "write": "write_ops"}
FILESYSTEMS = ("btrfs", "ext4", "xfs")
# BTRFS_BTREE_INODE_OBJECTID: the inode whose page cache holds btrfs's metadata blocks.
BTRFS_BTREE_INODE = 1
# The fewest gaps between a task's calls from which Ops.paced compares their variances.
MIN_PACED_GAPS = 10


@dataclass
class Ops:
    """Operations of one kind (sync, fsync, snapshot, ...), one row each."""

    pid: np.ndarray
    start: np.ndarray  # ns
    end: np.ndarray  # ns, -1 when the capture did not see the exit
    ino: np.ndarray  # the inode they act on, -1 when unknown or all
    # The filesystem each acted on ("btrfs", "ext4", "xfs", "other"; None unknown), when
    # the capture tells (fsync_ops.fs); None for all when it does not.
    fs: np.ndarray | None = None
    # btrfs fsyncs in a capture without their returns: when each returned, inferred from
    # the log commit it returned with (replay/btrfs_returns.py), -1 where none fits. Not
    # an observation: the replay's "observed" column never reads it.
    end_inferred: np.ndarray | None = None

    @classmethod
    def empty(cls) -> "Ops":
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z)

    def __len__(self) -> int:
        return len(self.start)

    def on(self, fs: str) -> "Ops":
        """Those that may have acted on filesystem `fs`: named so, or of unknown filesystem
        (a btrfs fsync replay leaves out an ext4 fsync the capture shows as ext4's)."""
        if self.fs is None:
            return self
        keep = self.mask_on(fs)
        inferred = None if self.end_inferred is None else self.end_inferred[keep]
        return Ops(self.pid[keep], self.start[keep], self.end[keep], self.ino[keep], self.fs[keep], inferred)

    def mask_on(self, fs: str) -> np.ndarray:
        """Which ones `on(fs)` keeps."""
        if self.fs is None:
            return np.ones(len(self), dtype=bool)
        return np.array([f is None or f == fs for f in self.fs], dtype=bool)

    @property
    def complete(self) -> np.ndarray:
        return self.end >= 0

    def returns(self) -> np.ndarray:
        """Each one's return: seen, else inferred, else -1."""
        if self.end_inferred is None:
            return self.end
        return np.where(self.end >= 0, self.end, self.end_inferred)

    def durations_ns(self) -> np.ndarray:
        return (self.end - self.start)[self.complete]

    def paced(self) -> np.ndarray:
        """Per operation: does its task keep a schedule? A rate-limited writer (fio
        --rate_iops, a database's checkpointer) calls on a clock: an fsync that ran long
        is followed by a shorter gap before the next call, so its calls' spacing varies
        less than the gaps themselves. In a closed loop (work, fsync, work, ...) the
        spacing is the fsync plus the gap and varies more. Judged on the task's calls
        whose return is known (seen or inferred), from MIN_PACED_GAPS gaps up: with
        fewer, two variances say little. Example: fio at 100 IOPS, an fsync every 4
        writes, calls every 40.0 ms (sd 1.6) while its fsyncs take 11-24 ms."""
        out = np.zeros(len(self), dtype=bool)
        ends = self.returns()
        for rows in btrfs_log.rows_by_task(self.pid).values():
            rows = rows[np.argsort(self.start[rows], kind="stable")]
            known = ends[rows[:-1]] >= 0
            if known.sum() < MIN_PACED_GAPS:
                continue
            spacing = (self.start[rows[1:]] - self.start[rows[:-1]])[known]
            gaps = (self.start[rows[1:]] - ends[rows[:-1]])[known]
            out[rows] = np.var(spacing) < np.var(gaps)
        return out

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
    step, or 1 s before (the window the btrfs-delalloc-overflush rule measures)."""

    ts: np.ndarray
    delalloc: np.ndarray  # bool: a FLUSH_DELALLOC* step (flush_space.delalloc)
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
    # Per inode_wb event: a writeback_single_inode whose i_state after the pass has no
    # I_DIRTY_PAGES, so every page of the inode was submitted (False for the ends of
    # writeback, sb_clear_inode_writeback, and for a pass that left pages dirty).
    inode_wb_all_written: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # Of those, the writeback code's own passes (writeback_single_inode: the flusher, sync):
    # when each inode's dirty pages were submitted.
    inode_written_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_written_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Pages each of those passes wrote (writeback_single_inode's wrote; -1 when not
    # recorded): 0 when the pass found none to write, only the inode itself.
    inode_written_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # When an inode was evicted (deleted, its dirty pages dropped unwritten), sorted.
    inode_evicted_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_evicted_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Inodes turned dirty without a page dirtied: only their metadata (advisor.views.pagecache.INODES_ENQUEUED), by time.
    inode_enqueued_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_enqueued_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # When an inode's last page left writeback (sb_clear_inode_writeback), sorted.
    inode_completed_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_completed_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # When an inode got its first page under writeback (sb_mark_inode_writeback), in the
    # context of whoever put it there: sorted, with the inode and that task.
    inode_marked_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_marked_ino: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inode_marked_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Completions of the capture's data write requests (not metadata), sorted.
    write_done_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    page_waits: int | None = None  # observed waits on page writeback (None: not recorded)
    # balance_dirty_pages sleeps (throttling.pause_ms > 0): when each began, whose, how long.
    throttle_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    throttle_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    throttle_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    page_wait_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each wait: when, which task
    page_wait_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    page_wait_key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # its page (page_key), -1: not recorded
    flush: FlushRequests | None = None
    reservations: MetadataReservations | None = None  # synthetic: replay the reservation loop itself
    reclaim_events: int | None = None  # None: reclaim events not recorded
    log_commits: btrfs_log.LogCommits | None = None  # btrfs log commits the capture shows
    # btrfs transaction commits (btrfs_transaction_commit fires as one ends) and the ends of
    # the flusher's writeback works (writeback_written), which bound when a sync's commit
    # began: read only for a capture with a sync (the commits for btrfs only).
    transaction_commit_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    writeback_work_end_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Per sync (op("sync")), when its ->sync_fs began, -1 when unknown; empty on btrfs
    # without btrfs_sync_fs, whose commit comes from transaction_commit_ts (advisor.replay.sync_fs).
    sync_fs_start_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dirty_limit_pages: int | None = None
    # Flusher CPU time per inode written (writepages, bio building), without the IO wait.
    inode_writeback_ns: float = 20_000.0
    # The flusher's wall-clock time per inode while it works through a list (the CPU time,
    # plus what it waits for: CPU taken by other tasks, log space, request slots).
    flusher_pace_ns: float | None = None
    # The flusher's work items queued by sync(2) (reason sync): start, end, sync_mode
    # (0 WB_SYNC_NONE, 1 WB_SYNC_ALL), sorted by start. Empty: not recorded.
    sync_work_start_ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sync_work_mode: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Inside the flusher's WB_SYNC_ALL sync work: the inodes whose pages it waited on, and
    # those it wrote pages of. None: page waits, inode writeback or work items not recorded.
    sync_all_waited_inodes: tuple[int, int] | None = None
    # Bytes one dirtying event stands for: a page, or a large folio (see _folio_bytes).
    folio_bytes: int = 4096
    # Per dirtying event, the pages of its folio when large folios differ in size
    # (advisor.replay.folios; read through pages.key_bytes); None: folio_bytes each.
    dirty_pages: np.ndarray | None = None
    # Metadata the filesystem writes per inode written (inode clusters, log, directories).
    metadata_bytes_per_inode: float = 0.0
    kernel: str | None = None
    stable_writes: bool | None = None
    params: dict = field(default_factory=dict)  # synthetic workloads: their description
    # Filesystems whose events the capture recorded (btrfs, ext4, xfs); None: synthetic.
    filesystems: frozenset[str] | None = None
    # Before this, some CPUs' overwritten buffers hold none of their events (None: every
    # CPU is recorded throughout; advisor.views.coverage).
    complete_from_ts: int | None = None
    # Writes another filesystem put on the disk under the replayed loop device, which the
    # device model does not replay (advisor.views.stacking.DeviceChoice.shared); "" when none.
    shared_device: str = ""
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
            "dirtied_bytes": (int(len(self.dirty_ts)) * self.folio_bytes if self.dirty_pages is None
                              else int(self.dirty_pages.sum()) * self.page_size),
            "inodes": int(len(distinct(self.dirty_ino))) if len(self.dirty_ino) else 0,
            "writers": int(len(distinct(self.dirty_pid))) if len(self.dirty_pid) else 0,
            "operations": {k: len(v) for k, v in sorted(self.ops.items()) if len(v)},
            "flush_requests": 0 if self.flush is None else len(self.flush.ts),
            "reclaim_events": self.reclaim_events,
            "dirty_limit_bytes": None if self.dirty_limit_pages is None else self.dirty_limit_pages * self.page_size,
            "kernel": self.kernel,
            "filesystems": None if self.filesystems is None else sorted(self.filesystems),
            "stable_writes": self.stable_writes,
            "complete_from_ts": self.complete_from_ts,
            "device": self.device.as_dict(),
            "params": self.params,
            "assumptions": list(self.assumptions),
        }


def page_key(ino: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """One sortable int64 per page: inode in the high 32 bits, page index in the low 32
    (2^32 pages of 4 KiB = 16 TiB per file). Sorted keys walk each inode's pages in index
    order, inodes one after another, as a writeback sweep does."""
    return (ino.astype(np.int64) << 32) | (idx.astype(np.int64) & 0xFFFFFFFF)


@dataclass(frozen=True)
class LeftOut:
    """What replayed_views left out, in sentences, and the other writes on the disk under
    a loop device it kept ("" when none)."""

    notes: list[str]
    shared_device: str = ""


@contextlib.contextmanager
def replayed_views(con, views: Views):
    """The views held as the replay reads them, for the workload and for what the capture
    measured alike: only the block requests of the filesystem's devices, and only the
    pages of its backing devices (advisor.views.stacking: a filesystem on a loop device
    shows its writes twice, and its writeback events name the backing file's device too).
    Yields a LeftOut."""
    with filesystem_requests(con, views) as choice, filesystem_pages(con, views, choice) as pages:
        shared = choice.shared if choice else ""
        yield LeftOut([note for note in (choice.note() if choice else "", pages, shared) if note], shared)


def from_store(con, source: str, device_override: Device | None = None, views: Views | None = None,
               left_out: LeftOut | None = None, kernel: str | None = None) -> Workload:
    """The workload of a store, read through its domain views (advisor.views); `left_out`:
    inside replayed_views already, what it left out. `kernel`: the release the user says
    the capture was recorded on, used where the capture does not record its own (a text
    capture has no uname)."""
    views = views or attach(con)
    if left_out is None:
        with replayed_views(con, views) as narrowed:
            return from_store(con, source, device_override, views, narrowed, kernel)
    w = _from_store(con, source, device_override, views, kernel)
    w.assumptions.extend(left_out.notes)
    w.shared_device = left_out.shared_device
    return w


def _from_store(con, source: str, device_override: Device | None, views: Views, kernel: str | None = None) -> Workload:
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    assumptions: list[str] = []
    if not info.get("kernel_release") and kernel:
        assumptions.append(f"the capture does not record its kernel: taken as {kernel} (--kernel)")
    page_size = int(info.get("page_size") or 4096)
    if "page_size" not in info:
        assumptions.append("page size 4096 bytes (the capture does not record it)")
    if views.met("dirtying.index"):
        dirty = con.execute('SELECT ts, CAST(ino AS BIGINT) AS ino, CAST("index" AS BIGINT) AS "index", pid FROM dirtying ORDER BY ts').fetchnumpy()
    else:
        z = np.zeros(0, np.int64)
        dirty = {"ts": z, "ino": z, "index": z, "pid": z}
    first, last = int(info.get("first_ts") or 0), int(info.get("last_ts") or 0)
    dev = device_override or devices.fit(con, views)
    w = Workload(
        source=source,
        page_size=page_size,
        start_ts=first,
        end_ts=last,
        dirty_ts=_i64(dirty["ts"]),
        dirty_ino=_i64(dirty["ino"]),
        dirty_idx=_i64(dirty["index"]),
        dirty_pid=_i64(dirty["pid"]),
        device=dev or devices.preset("ssd"),  # measured from inode writeback below when no block request fits it
        kernel=info.get("kernel_release") or kernel or None,
        assumptions=assumptions,
    )
    at = len(w.assumptions)  # the device's line comes first, though measured after the inodes' writeback
    w.folio_bytes = page_size
    w.filesystems = frozenset(fs for fs in FILESYSTEMS if fs in views.filesystems.shown)
    _ops(con, views, w)
    _coverage(con, w)  # before the log commits: their returns are inferred where every CPU's events are there
    _lost(con, w)
    _inode_writeback(con, views, w)
    if dev is None:
        w.assumptions.insert(at, _device_from_inodes(views, w))
    _evictions(con, views, w)
    _enqueued(con, views, w)
    _log_commits(con, views, w)
    if w.log_commits is not None:
        w.filesystems |= {"btrfs"}
    _paced_fsyncs(w)
    if views.met("block_requests"):
        w.write_done_ts = _i64(con.execute("SELECT complete_ts FROM block_requests WHERE write AND NOT meta AND bytes > 0 "
                                           "AND complete_ts IS NOT NULL ORDER BY complete_ts").fetchnumpy()["complete_ts"])
    sync_fs.read(con, views, w)  # before the metadata per inode, which leaves ->sync_fs's own writes out
    _writeback(con, views, w)
    _transaction_commits(con, views, w)
    _folio_bytes(con, views, w)
    _pressure(con, views, w)
    return w


def _coverage(con, w: Workload) -> None:
    """Say where the workload lacks some CPUs' events: their dirtying, requests and
    completions there are not replayed, while the calls recorded on other CPUs are."""
    c = cpu_coverage(con)
    if c is None:
        return
    w.complete_from_ts = c.complete_from_ts
    w.assumptions.append(f"a partial workload at first: {c.describe()}. The replay runs on the events recorded; "
                         f"operations before +{(c.complete_from_ts - c.first_ts) / 1e9:.3f} s may have had writes, "
                         "requests and completions on those CPUs that it does not see")


def _lost(con, w: Workload) -> None:
    """Say that events the kernel dropped are missing from the workload (the dirtying,
    requests and calls among them are not replayed)."""
    lost = lost_facts(con)
    if lost_any(lost):
        w.assumptions.append(f"the capture lost events ({lost['lost_events']:,} lost{lost_detail(lost)}): "
                             "the dirtying, requests and calls among them are missing from the workload replayed")


def _folio_bytes(con, views: Views, w: Workload) -> None:
    """writeback_dirty_folio fires once per folio and does not say how large the folio is:
    XFS and ext4 (6.x) cache a 16 KiB file in one 16 KiB folio. When the capture's data
    writes (block requests without RWBS 'M') are clearly more than one page per dirtying,
    each dirtying stands for their mean, rounded to a power of two."""
    if not views.met("block_requests") or not len(w.dirty_ts):
        return
    data = con.execute("SELECT coalesce(sum(bytes), 0) FROM block_requests WHERE write AND NOT meta").fetchone()[0]
    per = float(data) / max(1, _written_in_capture(w))
    if per <= 1.5 * w.page_size:
        return
    bdev = _bdev_inodes(con)
    adjacent, pairs = _adjacent_dirtied_pages(w, bdev)
    if 2 * adjacent > pairs:
        # Neighbouring folios one page apart are one page each, whatever the requests
        # carried (data dirtied before the capture began, written back inside it).
        w.assumptions.append(f"one dirtying event = one page: {adjacent:,} of the {pairs:,} neighbouring dirtied indexes of an "
                             f"inode are one page apart, although the data writes average {per / 1024:.1f} KiB per dirtying event")
    else:
        w.folio_bytes = int(min(2 ** round(np.log2(per)), 2 * 1024 * 1024))
        w.dirty_pages, known = folios.pages_per_dirtying(w.dirty_ts, w.dirty_ino, w.dirty_idx, w.folio_bytes / w.page_size)
        buffers = np.isin(w.dirty_ino, bdev)
        w.dirty_pages[buffers] = 1.0
        w.assumptions.append(f"one dirtying event = its folio: {known:,} of {len(w.dirty_ts):,} folios' sizes read from where "
                             f"the next folio of their file starts, {int(buffers.sum()):,} one page each (metadata buffers in a block "
                             f"device's own page cache), the others {w.folio_bytes // 1024} KiB: "
                             f"the capture's data writes average {per / 1024:.1f} KiB per dirtying event (the event does not carry "
                             "the folio size)")


def _bdev_inodes(con) -> np.ndarray:
    """The inode numbers of the block devices' own page caches, where ext4 and XFS keep
    metadata buffers one page each: a block device's inode is numbered by its dev_t, so
    the pages ext4 on /dev/loop0 dirties there show as bdi 7:0, ino=7340032 (7 << 20)."""
    rows = con.execute("SELECT DISTINCT bdi FROM dirtying WHERE regexp_full_match(bdi, '[0-9]+:[0-9]+')").fetchall()
    return np.array([(int(b.split(":")[0]) << 20) | int(b.split(":")[1]) for (b,) in rows], np.int64)


def _adjacent_dirtied_pages(w: Workload, bdev_inodes: np.ndarray) -> tuple[int, int]:
    """Among each data inode's distinct dirtied indexes, in order: how many neighbours are
    one page apart, of how many neighbours. A folio of k pages is dirtied at its first
    index, so large folios leave gaps of k between neighbours (xfs: 0, 4, 8 ... for 16 KiB
    folios) and one-page folios of a file written in order leave gaps of 1. Metadata
    inodes (btrfs's btree inode, a block device's) are left out: their buffers are one
    page each whatever the files' folios are (ext4 under fs_mark, 8 KiB files: 20,000 files
    dirtied once each, and the device's inode 1,599 pages, 1,595 of them next to another)."""
    data = (w.dirty_ino != BTRFS_BTREE_INODE) & (w.dirty_idx >= 0) & ~np.isin(w.dirty_ino, bdev_inodes)
    keys = distinct(page_key(w.dirty_ino[data], w.dirty_idx[data]))
    if len(keys) < 2:
        return 0, 0
    same = (keys[1:] >> 32) == (keys[:-1] >> 32)
    gaps = np.diff(keys)[same]
    return int((gaps == 1).sum()), int(len(gaps))


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


def _i64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


def _ops(con, views: Views, w: Workload) -> None:
    for kind, view in OPS_VIEWS.items():
        if not views.met(view):
            continue
        if kind in ("fsync", "sync_file_range") and len(w.dirty_ts):
            # fsync(fd) names a file descriptor, not an inode: the view has the inode when a
            # filesystem event inside the call names it (btrfs_sync_file); otherwise take
            # the inode this task dirtied last before the call (fio's writers fsync what
            # they wrote; dbench's clients often not).
            named = "s.ino" if views.met(f"{view}.ino") else "NULL"
            fs = "s.fs" if views.met(f"{view}.fs") else "NULL::VARCHAR"
            sql = (f"SELECT s.pid, s.start_ts, coalesce(s.end_ts, -1) AS end_ts, coalesce(CAST({named} AS BIGINT), CAST(d.ino AS BIGINT), -1) AS ino, "
                   f"{fs} AS fs FROM {view} s ASOF LEFT JOIN dirtying d ON d.pid = s.pid AND d.ts <= s.start_ts ORDER BY s.start_ts")
            w.assumptions.append(f"{kind}'s file is the inode a filesystem event inside the call names, else the inode its task dirtied last "
                                 "before it (fd → inode is not traced)" if named != "NULL" else
                                 f"{kind}'s file is the inode its task dirtied last before the call (fd → inode is not traced)")
        else:
            sql = f"SELECT pid, start_ts, coalesce(end_ts, -1) AS end_ts, -1 AS ino FROM {view} ORDER BY start_ts"
        r = con.execute(sql).fetchnumpy()
        if len(r["pid"]):
            fs = r.get("fs")
            fs = None if fs is None or not any(v is not None for v in fs.tolist()) else np.asarray(fs.tolist(), dtype=object)
            w.ops[kind] = Ops(_i64(r["pid"]), _i64(r["start_ts"]), _i64(r["end_ts"]), _i64(r["ino"]), fs)
            others = len(w.ops[kind]) - len(w.ops[kind].on("btrfs"))
            if others:
                w.assumptions.append(f"{others:,} of the {len(w.ops[kind]):,} {kind} calls were on another filesystem than btrfs "
                                     f"(no btrfs fsync event inside them): btrfs's {kind} replay leaves them out")
            if views.built[view].lacks:  # what the calls replayed cannot show (none: nothing to say)
                w.assumptions.append(f"{view} from {views.built[view].source}: {views.built[view].lacks}")


def _log_commits(con, views: Views, w: Workload) -> None:
    fsync = w.op("fsync").on("btrfs")  # btrfs's log tree: its own fsyncs
    if views.met("block_requests") and len(fsync):
        inferred = not fsync.complete.any() and "btrfs" in views.filesystems.shown
        # Calls only (btrfs_sync_file): each log commit's superblock write and post-flush
        # show when its fsyncs returned.
        requests = btrfs_log.WriteRequests.load(con)
        ends = _infer_fsync_returns(con, requests, w) if inferred else fsync.end
        w.log_commits = btrfs_log.observe(requests, fsync.pid, fsync.start, ends)
        if w.log_commits is not None:
            w.log_commits.returns_inferred = inferred
            w.assumptions.append(w.log_commits.describe())
    elif len(fsync) and fsync.complete.any() and views.met("inode_writeback") and "btrfs" in views.filesystems.shown:
        w.log_commits = _log_commits_from_inodes(w, fsync)
        if w.log_commits is not None:
            w.assumptions.append(w.log_commits.describe() + " (from the btree inode's writeback inside the fsyncs, "
                                 "sb_mark_inode_writeback ino 1: no block requests in the capture)")
    if w.log_commits is None and len(fsync) and "btrfs" in views.filesystems.shown:
        # A log commit is found from its superblock write, issued inside the committing
        # fsync, or from the btree inode going under writeback there: without either
        # there is none to see.
        why = ("no block requests, nor the btree inode's writeback inside an fsync" if not views.met("block_requests")
               else "no btrfs superblock write issued by a task inside an fsync")
        w.assumptions.append(
            f"btrfs log commits not measured ({why}): each is replayed as a log write and a superblock write, each "
            "waiting for a cache flush, without batching. Commits measured on captures that show them took 0.9-3.5x "
            "that (the log tree takes several writes, twice with the DUP metadata profile), and a lone one waited "
            "0.1-13 ms for ordered extents first: the fsync times here are likely low")


def _log_commits_from_inodes(w: Workload, fsync: Ops) -> btrfs_log.LogCommits | None:
    if not len(w.inode_marked_ts) or not len(w.inode_completed_ts):
        return None
    return btrfs_log.observe_inode_writeback(
        fsync.pid, fsync.start, fsync.end, fsync.ino,
        {"ts": w.inode_marked_ts, "pid": w.inode_marked_pid, "ino": w.inode_marked_ino},
        {"ts": w.inode_completed_ts, "ino": w.inode_completed_ino})


def _paced_fsyncs(w: Workload) -> None:
    """Say which tasks' btrfs fsyncs keep a schedule (Ops.paced): the fsync replay keeps
    their calls."""
    if w.filesystems is not None and "btrfs" not in w.filesystems:
        return
    fsync = w.op("fsync").on("btrfs")
    paced = fsync.paced()
    if not paced.any():
        return
    calls = fsync.start[paced]
    by_task = btrfs_log.rows_by_task(fsync.pid[paced])
    spacing = np.concatenate([np.diff(np.sort(calls[rows])) for rows in by_task.values()])
    w.assumptions.append(
        f"{len(by_task)} of {len(np.unique(fsync.pid))} tasks calling fsync keep a schedule (a call every "
        f"{np.median(spacing) / 1e6:.1f} ms median, spaced more evenly than the gaps after each return, as a rate-limited "
        "writer's are): the replay keeps their recorded call times, later only where the previous fsync returns late")


def _infer_fsync_returns(con, requests: btrfs_log.WriteRequests, w: Workload) -> np.ndarray:
    """The btrfs fsyncs' returns inferred from the log commits (see btrfs_returns), kept
    on the fsync operations for the replay's timing of each task's next call."""
    ops = w.ops["fsync"]
    mine = ops.mask_on("btrfs")
    # Where some CPUs' buffers were overwritten, their tasks' writes and dirtying are
    # missing, and with them what bounds a return: those fsyncs keep none.
    whole = mine & (ops.start >= (w.complete_from_ts or w.start_ts))
    data = w.dirty_ino != BTRFS_BTREE_INODE
    inferred = np.full(len(ops), -1, np.int64)
    inferred[whole] = btrfs_returns.infer(con, requests, ops.pid[whole], ops.start[whole], w.end_ts, w.dirty_pid[data],
                                          w.dirty_ts[data])
    ops.end_inferred = inferred
    return inferred[mine]


def _inode_writeback(con, views: Views, w: Workload) -> None:
    """The inode_writeback view, read once: marks, completions and the writeback code's
    passes (the log commits without block requests read them too)."""
    if views.met("inode_writeback"):
        wrote = "coalesce(wrote, -1)" if views.met("inode_writeback.wrote") else "-1"
        # i_state as a number, else its printed names (a text capture printed without -R).
        clean = ("coalesce(i_state & 4 = 0, i_state_name NOT LIKE '%I_DIRTY_PAGES%', false)"
                 if views.met("inode_writeback.i_state") else "false")
        r = con.execute(f"SELECT ts, CAST(ino AS BIGINT) AS ino, kind = 'written' AS written, kind = 'marked' AS marked, "
                        f"CAST({wrote} AS BIGINT) AS wrote, pid, kind = 'written' AND {clean} AS all_written "
                        "FROM inode_writeback ORDER BY ts").fetchnumpy()
        ts, ino, pid = _i64(r["ts"]), _i64(r["ino"]), _i64(r["pid"])
        marked, written = np.asarray(r["marked"], dtype=bool), np.asarray(r["written"], dtype=bool)
        wrote, all_written = _i64(r["wrote"]), np.asarray(r["all_written"], dtype=bool)
        kind = np.where(marked, redirty.MARKED, np.where(written, redirty.WRITTEN, redirty.COMPLETED))
        drop, redirtied = redirty.empty_writebacks(ts, ino, pid, kind, w.dirty_ts, w.dirty_ino, w.dirty_key, w.dirty_pid)
        if drop.any():
            w.assumptions.append(
                f"{int(drop.sum()) // 2:,} writebacks wrote nothing: the task that put the inode under writeback took it off "
                f"at once itself, having re-dirtied the pages it could not write ({int(redirtied.sum()):,} re-dirtyings: ext4's "
                "journal commit does so with delayed-allocation pages); the pages stay dirty")
            ts, ino, pid, marked, written, wrote = ts[~drop], ino[~drop], pid[~drop], marked[~drop], written[~drop], wrote[~drop]
            all_written = all_written[~drop]
            keep = ~redirtied
            w.dirty_ts, w.dirty_ino, w.dirty_idx, w.dirty_pid = w.dirty_ts[keep], w.dirty_ino[keep], w.dirty_idx[keep], w.dirty_pid[keep]
        w.inode_marked_ts, w.inode_marked_ino, w.inode_marked_pid = ts[marked], ino[marked], pid[marked]
        w.inode_wb_ts, w.inode_wb_ino, w.inode_wb_all_written = ts[~marked], ino[~marked], all_written[~marked]
        written = written[~marked]
        w.inode_written_ts, w.inode_written_ino = w.inode_wb_ts[written], w.inode_wb_ino[written]
        w.inode_written_pages = wrote[~marked][written]
        w.inode_completed_ts, w.inode_completed_ino = w.inode_wb_ts[~written], w.inode_wb_ino[~written]


def _device_from_inodes(views: Views, w: Workload) -> str:
    """Without block requests to fit the device to, measure it from the inodes entering
    and leaving writeback (advisor.replay.device_inodes), else take the SSD preset; says which."""
    b = views.built["block_requests"]
    why = f"no usable block requests in the capture ({b.lacks})" if not b.available else "no completed write requests in the capture"
    dev = fit_from_inodes(w.inode_marked_ts, w.inode_marked_ino, w.inode_completed_ts, w.inode_completed_ino,
                          w.dirty_ts, w.dirty_ino, w.dirty_idx, w.page_size)
    if dev is not None:
        w.device = dev
        return f"{why}: the device is {dev.source}"
    return (f"{why}, nor inodes both entering and leaving writeback (sb_mark_inode_writeback, "
            "sb_clear_inode_writeback): device assumed a SATA SSD (500 MB/s, 50 us per request, queue depth 32)")


def _evictions(con, views: Views, w: Workload) -> None:
    """Inodes evicted (advisor.views.pagecache.INODE_EVICTIONS): the pages they had dirty
    are dropped, so a sync or the flusher after it does not write them. Said when some
    of the workload's dirtied inodes went that way."""
    if not views.met("inode_evictions"):
        if len(w.dirty_ts):
            b = views.built["inode_evictions"]
            w.assumptions.append(f"no file deletion is seen ({b.lacks}): a file deleted with dirty pages is replayed as if "
                                 "its pages stayed dirty until written")
        return
    r = con.execute("SELECT ts, CAST(ino AS BIGINT) AS ino FROM inode_evictions ORDER BY ts").fetchnumpy()
    w.inode_evicted_ts, w.inode_evicted_ino = _i64(r["ts"]), _i64(r["ino"])
    dirtied = distinct(w.dirty_ino)
    hit = np.isin(w.inode_evicted_ino, dirtied)
    if hit.any():
        w.assumptions.append(f"{int(hit.sum()):,} evictions of {len(np.unique(w.inode_evicted_ino[hit])):,} of the "
                             f"{len(dirtied):,} dirtied inode numbers (files deleted; ext4_evict_inode, xfs_destroy_inode, "
                             "btrfs_inode_evict): the pages an inode had dirty then are dropped, never written")


# The superblocks whose inodes the workload dirties pages of: an enqueued inode elsewhere
# (tmpfs, the block device's own inode) is not on a filesystem the capture's writeback shows.
# Every block device's own inode (numbered by its dev_t) lives on one anonymous superblock,
# "bdev" (dev 0:3): the metadata buffers ext4 dirties on /dev/loop0 put 7340032 (7:0) there,
# and the host disk's 266338304 (254:0) is another filesystem's, not the loop device's.
_ENQUEUED = """
WITH d AS (SELECT DISTINCT ino FROM dirtying),
     devs AS (SELECT DISTINCT q.dev FROM inodes_enqueued q JOIN d USING (ino)),
     bdev AS (SELECT CAST((CAST(split_part(bdi, ':', 1) AS BIGINT) << 20) | CAST(split_part(bdi, ':', 2) AS BIGINT) AS UBIGINT) AS ino
              FROM (SELECT DISTINCT bdi FROM dirtying WHERE regexp_full_match(bdi, '[0-9]+:[0-9]+'))),
     bdev_fs AS (SELECT DISTINCT q.dev FROM inodes_enqueued q
                 WHERE TRY_CAST(q.dev AS BIGINT) < 1048576 AND q.ino IN (SELECT ino FROM bdev))
SELECT ts, CAST(ino AS BIGINT) AS ino, ino IN (SELECT ino FROM d) AS paged FROM inodes_enqueued
WHERE dev IN (SELECT dev FROM devs)
  AND NOT (dev IN (SELECT dev FROM bdev_fs) AND ino NOT IN (SELECT ino FROM bdev))
ORDER BY ts
"""


def _enqueued(con, views: Views, w: Workload) -> None:
    """Inodes put on the dirty lists that the workload never dirties a page of (a
    directory whose entries changed, a file whose times or size did): a sync writes them
    too (writeback_single_inode, wrote 0). Said only where a sync is replayed."""
    if not len(w.op("sync")):
        return
    if not (views.met("inodes_enqueued") and views.met("dirtying")):
        b = views.built["inodes_enqueued"]
        w.assumptions.append(f"inodes dirtied without a page (metadata only) are not seen ({b.lacks}): a sync is replayed "
                             "writing only inodes with dirty pages")
        return
    r = con.execute(_ENQUEUED).fetchnumpy()
    ts, ino, paged = _i64(r["ts"]), _i64(r["ino"]), np.asarray(r["paged"], dtype=bool)
    keep = ~paged
    keep[paged] = _without_pages(w, ts[paged], ino[paged])
    w.inode_enqueued_ts, w.inode_enqueued_ino = ts[keep], ino[keep]
    if n := len(np.unique(w.inode_enqueued_ino)):
        w.assumptions.append(f"{n:,} inode{'s' if n > 1 else ''} turned dirty with no page dirtied before the next writeback "
                             "of the inode (metadata only: writeback_dirty_inode_enqueue on the filesystems of the dirtied "
                             "pages); a sync writes them, with their metadata and no data")


def _without_pages(w: Workload, ts: np.ndarray, ino: np.ndarray) -> np.ndarray:
    """Mask over enqueues (ts, ino) of inodes that have pages dirtied somewhere in the
    capture: True where the dirty spell the enqueue began saw no page of the inode dirtied.

    The enqueue fires as an inode turns from clean to dirty, so a spell runs from one visit
    of the inode (writeback_single_inode, else the end of its writeback) or eviction to the
    next. A write(2) to a clean file shows the enqueue of its time update, then its pages
    (dbench on ext4: inode 131349 enqueued at 43525.926228, its first page dirtied 5 us
    later); that spell is the pages'. A chmod, a rename or a utimensat after the flusher
    wrote the file shows the enqueue alone, and a sync writes the inode for its metadata.
    Without visits the spell is the whole capture."""
    if not len(ts):
        return np.zeros(0, dtype=bool)
    visit_ts, visit_ino = (w.inode_written_ts, w.inode_written_ino) if len(w.inode_written_ts) else (w.inode_wb_ts, w.inode_wb_ino)
    inodes = np.unique(ino)
    visited, evicted, dirty = (np.isin(a, inodes) for a in (visit_ino, w.inode_evicted_ino, w.dirty_ino))
    parts = ((visit_ts[visited], visit_ino[visited], 0), (w.inode_evicted_ts[evicted], w.inode_evicted_ino[evicted], 0),
             (w.dirty_ts[dirty], w.dirty_ino[dirty], 1), (ts, ino, 2))
    all_ts = np.concatenate([p[0] for p in parts])
    all_ino = np.concatenate([p[1] for p in parts])
    kind = np.concatenate([np.full(len(p[0]), p[2], np.int8) for p in parts])
    order = np.lexsort((kind, all_ts, all_ino))  # by inode, then time; at one ns a visit first
    s_ino, s_kind = all_ino[order], kind[order]
    spell = np.cumsum((s_kind == 0) | np.concatenate(([True], s_ino[1:] != s_ino[:-1])))
    has_page = np.zeros(spell[-1] + 1, dtype=bool)
    has_page[spell[s_kind == 1]] = True
    keep = np.empty(len(ts), dtype=bool)
    enq = s_kind == 2
    keep[order[enq] - (len(all_ts) - len(ts))] = ~has_page[spell[enq]]
    return keep


def _writeback(con, views: Views, w: Workload) -> None:
    if views.met("pages_written.index"):
        r = con.execute('SELECT ts, CAST(ino AS BIGINT) AS ino, CAST("index" AS BIGINT) AS i FROM pages_written ORDER BY ts').fetchnumpy()
        w.page_wb_ts, w.page_wb_key = _i64(r["ts"]), page_key(_i64(r["ino"]), _i64(r["i"]))
    _inode_cost(con, views, w)
    if views.met("throttling"):
        r = con.execute("SELECT ts, pid, pause_ms * 1000000 AS ns FROM throttling WHERE pause_ms > 0 ORDER BY ts").fetchnumpy()
        w.throttle_ts, w.throttle_pid, w.throttle_ns = _i64(r["ts"]), _i64(r["pid"]), _i64(r["ns"])
    if views.met("page_waits"):
        r = con.execute('SELECT ts, pid, coalesce(CAST(ino AS BIGINT), -1) AS ino, coalesce(CAST("index" AS BIGINT), -1) AS i '
                        "FROM page_waits ORDER BY ts").fetchnumpy()
        w.page_wait_ts, w.page_wait_pid = _i64(r["ts"]), _i64(r["pid"])
        ino, idx = _i64(r["ino"]), _i64(r["i"])
        w.page_wait_key = np.where((ino >= 0) & (idx >= 0), page_key(ino, idx), -1)
        w.page_waits = len(w.page_wait_ts)
        _stable_writes(con, w)


def _transaction_commits(con, views: Views, w: Workload) -> None:
    """What the sync model takes from a btrfs capture besides the flusher's pass: the
    commit that ends each sync (problems/sync_flusher_stall) and the tree blocks' own rate."""
    if not w.records("btrfs") or not len(w.op("sync")):
        return
    if views.met("commits"):
        w.transaction_commit_ts = _i64(con.execute("SELECT end_ts FROM commits WHERE fs = 'btrfs' ORDER BY end_ts").fetchnumpy()["end_ts"])
    w.assumptions.append(
        f"the btrfs transaction commit ending a sync is replayed as recorded ({len(w.transaction_commit_ts)} btrfs transaction commits "
        "in the capture): the sync policies change the flusher's pass, not the commit" if len(w.transaction_commit_ts) else
        "no btrfs transaction commit recorded (btrfs:btrfs_transaction_commit): the replayed sync leaves out the commit that ends it")
    if w.device.metadata_bandwidth:
        w.assumptions.append(f"btrfs tree blocks written at {w.device.metadata_bandwidth / 1e6:.0f} MB/s, the rate of the capture's "
                             "metadata requests (RWBS M) over their own busy time")


def _inode_cost(con, views: Views, w: Workload) -> None:
    row = flusher_cpu_per_inode(con) if views.met("inode_writeback") else None
    _metadata_per_inode(con, views, w)
    _flusher_pace(con, views, w)
    if row and row[1] and row[1] >= 10:
        w.inode_writeback_ns = float(row[0])
        w.assumptions.append(f"flusher CPU per inode {row[0] / 1e3:.1f} us: median gap of {row[1]} back-to-back inode writebacks "
                             "(writeback_single_inode)")
    else:
        w.assumptions.append("flusher CPU per inode 20 us (no bursts of writeback_single_inode in the capture to measure it; "
                             "an XFS capture of 6,000 small files showed 23 us)")


# A longer gap between two inodes of one work is the flusher doing something else.
_PACE_MAX_GAP_NS = 100_000_000


def _flusher_pace(con, views: Views, w: Workload) -> None:
    """Mean gap between consecutive inodes one flusher wrote within one work item: on a
    2-core machine with fs_mark's two threads and the tracer running, 34 us per inode
    where the back-to-back bursts show 9.6 us of the flusher's own CPU."""
    if not (views.met("inode_writeback") and views.met("writeback_works")):
        return
    # WB_SYNC_NONE works only: a kernel without wbc->for_sync waits on each inode's pages
    # inside WB_SYNC_ALL work (lab revert run 2: 8.7 ms a gap there, 0.2 ms in the
    # WB_SYNC_NONE pass before it), which is the policy replayed, not the flusher's pace.
    row = con.execute(
        "WITH g AS (SELECT i.ts - lag(i.ts) OVER (PARTITION BY i.pid, wk.start_ts ORDER BY i.ts) AS gap "
        "FROM inode_writeback i JOIN writeback_works wk ON wk.pid = i.pid AND i.ts BETWEEN wk.start_ts AND wk.end_ts "
        f"WHERE i.kind = 'written' AND wk.sync_mode = 0) SELECT avg(gap), count(gap) FROM g WHERE gap < {_PACE_MAX_GAP_NS}"
    ).fetchone()
    if row and row[1] and row[1] >= 10:
        w.flusher_pace_ns = float(row[0])
        w.assumptions.append(f"the flusher goes through its inode lists at {row[0] / 1e3:.1f} us per inode (mean gap of {row[1]} "
                             "consecutive inode writebacks within its WB_SYNC_NONE work items)")
    works = con.execute(
        "SELECT start_ts, sync_mode FROM writeback_works WHERE reason_name = 'sync' AND sync_mode IN (0, 1) ORDER BY start_ts"
    ).fetchnumpy()
    w.sync_work_start_ts, w.sync_work_mode = _i64(works["start_ts"]), _i64(works["sync_mode"])
    if views.met("page_waits.ino") and (works["sync_mode"] == 1).any():
        w.sync_all_waited_inodes = con.execute(
            "WITH wk AS (SELECT pid, start_ts, end_ts FROM writeback_works WHERE reason_name = 'sync' AND sync_mode = 1) "
            "SELECT (SELECT count(DISTINCT p.ino) FROM page_waits p JOIN wk ON p.pid = wk.pid AND p.ts BETWEEN wk.start_ts AND wk.end_ts), "
            "(SELECT count(DISTINCT i.ino) FROM inode_writeback i JOIN wk ON i.pid = wk.pid AND i.ts BETWEEN wk.start_ts AND wk.end_ts "
            "WHERE i.kind = 'written' AND i.wrote > 0)").fetchone()


def _metadata_per_inode(con, views: Views, w: Workload) -> None:
    """Metadata-flagged write bytes (RWBS 'M': log, inode clusters) per inode written,
    without those completed inside an fsync or a sync's ->sync_fs, which commit the journal
    or log themselves (dbench on ext4: 14.8 of the 15.0 MB of metadata writes were inside
    its 676 fsyncs; a sync among them wrote 0.7 MB of metadata, in its ->sync_fs)."""
    if not views.met("block_requests") or not views.met("inode_writeback"):
        return
    r = con.execute("SELECT complete_ts, bytes FROM block_requests WHERE write AND meta AND complete_ts IS NOT NULL").fetchnumpy()
    done, nbytes = _i64(r["complete_ts"]), np.asarray(r["bytes"], np.float64)
    inodes = con.execute("SELECT count(*) FROM inode_writeback WHERE kind = 'written'").fetchone()[0]
    fsyncs, syncs = w.op("fsync"), w.op("sync")
    sync_fs_start = w.sync_fs_start_ts if len(w.sync_fs_start_ts) else np.full(len(syncs), -1, np.int64)
    tails = sync_fs_start >= 0
    starts = np.concatenate((fsyncs.start, sync_fs_start[tails]))
    ends = np.concatenate((np.where(fsyncs.end >= 0, fsyncs.end, w.end_ts), syncs.end[tails]))
    in_fsync = _inside(done, starts, ends)
    meta = float(nbytes[~in_fsync].sum())
    if meta and inodes:
        w.metadata_bytes_per_inode = meta / inodes
        left = f"; {nbytes[in_fsync].sum() / 1e6:.1f} MB completed inside fsyncs or ->sync_fs (their own commits) left out" if in_fsync.any() else ""
        w.assumptions.append(f"{w.metadata_bytes_per_inode / 1024:.1f} KiB of metadata writes (RWBS M) per inode written, "
                             f"from the capture's block requests and inode writebacks{left}")


def _inside(t: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per time in t, whether it falls within any [start, end] interval."""
    if not len(start) or not len(t):
        return np.zeros(len(t), bool)
    lo, hi = merged(start, end)
    i = np.searchsorted(lo, t, side="right") - 1
    return (i >= 0) & (hi[np.maximum(i, 0)] >= t)


def _stable_writes(con, w: Workload) -> None:
    """From 3.9 writers wait on page writeback only for devices that need stable pages,
    so waits inside write syscalls on such a kernel say the device needs them
    (stable_writes = 1). None inside writes does not say it does not: the writes may never
    have rewritten a page under writeback; the replay then models a device without stable
    pages, and says that this is an assumption. Waits elsewhere (fsync, sync, the flusher)
    say nothing about it; without write syscalls in the capture it stays unknown."""
    from advisor.kernel import parse_release  # noqa: PLC0415 - kernel parsing only when needed

    writes = w.op("write")
    if not w.page_waits or not w.kernel or not len(writes):
        return
    try:
        release = parse_release(w.kernel)
    except Exception:  # noqa: BLE001 - an unreadable uname leaves it unknown
        return
    if (release.major, release.minor) < (3, 9):
        return
    inside = int(con.execute("SELECT coalesce(sum(waits), 0) FROM stalled_writes()").fetchone()[0])
    w.stable_writes = bool(inside)
    w.assumptions.append(
        f"the device needs stable pages: {inside} of {w.page_waits} waits on page writeback were inside write syscalls on kernel "
        f"{w.kernel} (3.9+ waits there only then)" if inside else
        f"replayed as a device that does not need stable pages: none of the {w.page_waits} waits on page writeback was inside "
        f"a write syscall on kernel {w.kernel}; the capture cannot tell whether it needs them (its writes may never have "
        "rewritten a page under writeback)")


def _pressure(con, views: Views, w: Workload) -> None:
    if views.met("dirty_state.dirty_limit"):
        row = con.execute("SELECT median(dirty_limit) FROM dirty_state").fetchone()
        if row and row[0] is not None:
            w.dirty_limit_pages = int(row[0])
    if views.met("flush_space"):
        r = con.execute("SELECT ts, delalloc, coalesce(TRY_CAST(num_bytes AS BIGINT), -1) AS num_bytes, "
                        "coalesce(prev_ts, ts - 1000000000) AS since FROM flush_space ORDER BY ts").fetchnumpy()
        w.flush = FlushRequests(_i64(r["ts"]), np.asarray(r["delalloc"], dtype=bool), _i64(r["num_bytes"]), _i64(r["since"]))
    if views.met("reclaim"):
        w.reclaim_events = int(con.execute(
            "SELECT count(*) FROM reclaim WHERE kind IN ('direct', 'kswapd', 'memcg', 'memcg_softlimit', 'reclaim_write')").fetchone()[0])
