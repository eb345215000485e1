"""btrfs log commits as a capture shows them: how long one takes and how long the
committing task batches before it starts, measured from the block layer and the
fsync spans (without block events, from inode writeback: observe_inode_writeback).

Kernel path (fs/btrfs/tree-log.c, btrfs_sync_log, unchanged in this respect from 3.x to
6.18): an fsync logs its inode into the subvolume's log tree (start_log_trans joins the
running *log transaction*), then syncs the log. One task per log transaction commits it:
the first to reach btrfs_sync_log sets log_commit[] and waits for the previous log
transaction's commit (wait_log_commit); the others wait for its commit and return with
it. Before writing, the committer batches: when the filesystem is not in SSD mode (a
rotational device) and more than one task joined (BTRFS_ROOT_MULTI_LOG_TASKS), it sleeps
one jiffy (schedule_timeout_uninterruptible(1)) and loops while root->log_batch moved
during the sleep. Then it writes the log tree and the log root tree (RWBS 'WSM', twice
each with the DUP metadata profile), flushes the device cache, writes the primary
superblock only (write_all_supers(fs_info, 1): sector 128, 4 KiB) with FUA — emulated by
a post-flush where the device has no FUA — and every member returns.

What is read from the capture, for each log commit (a primary superblock write, a
metadata write of 4 KiB at sector 128, issued by a task inside one of its fsyncs after
other metadata writes of that fsync; on a device without FUA, kblockd issues it after the
preflush, and it belongs to the running fsync whose task wrote log blocks last):
  * `commit_ns`: from the committer's first log-tree write to its fsync's return (log
    writes, cache flush, superblock, post-flush);
  * its members: the fsyncs that entered before those log writes and returned with the
    commit; a member is ready when its data write (a non-metadata write it issued in
    its fsync) completed, and the committer can start no earlier than the previous
    commit's end;
  * `batch_ticks`, for commits with more than one member: the jiffy boundaries between the
    last member being ready and the log writes, and `tick_ns`, the jiffy, found from
    which CONFIG_HZ period (100, 250, 300, 1000) the log writes of those commits line up
    with. The sleeps end on a jiffy, so a batching commit starts on one. The loop needs
    one quiet jiffy after the last member joins; the dbench capture shows a median of 4
    after the last member's data is on disk. What kept it going (log_batch moving, or
    the tasks waiting for one of the capture machine's two busy CPUs) is not traced (no
    scheduler events), so the number is taken as the capture shows it, not derived;
  * `solo_prep_ns`, for commits with one member: from its data being on disk (or the
    previous commit's end) to its first log write. btrfs_sync_file waits for the ordered
    extents (checksums and file extent items, inserted by the endio workers) and logs
    the inode before it syncs the log: CPU work, which the VM capture's emulated CPU
    makes long (median 20 ms there, 1.6 ms on the host's dbench).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

# btrfs's primary superblock: 64 KiB into the device = sector 128, one 4 KiB block.
SUPER_SECTOR = 128
SUPER_SECTORS = 8
# BTRFS_BTREE_INODE_OBJECTID: the inode whose page cache holds every tree block.
BTREE_INO = 1
CONFIG_HZ = (100, 250, 300, 1000)
# Log writes of batching commits line up with a jiffy when their phase concentration
# (|mean of exp(2 pi i t / tick)|, 0 for uniform phases) is at least this.
ALIGNED = 0.5


@dataclass
class LogCommits:
    """The capture's btrfs log commits (see the module docstring)."""

    commit_ns: np.ndarray  # per commit: first log write to the committer's fsync return
    batch_ticks: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per shared commit
    tick_ns: int = 0  # the jiffy the batching sleeps are made of; 0: the capture shows no batching
    shared: int = 0  # commits more than one fsync returned with
    solo: int = 0
    # per commit only one fsync returned with: from its data on disk (or the previous
    # commit's end) to its first log write: ordered-extent completion and logging the inode
    solo_prep_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # The capture showed the fsyncs' starts only: their returns were inferred from the
    # commits' superblock writes (replay/btrfs_returns.py).
    returns_inferred: bool = False

    def describe(self) -> str:
        text = (f"{len(self.commit_ns)} btrfs log commits in the capture ({self.shared} shared by several fsyncs, {self.solo} alone): "
                f"median {np.median(self.commit_ns) / 1e6:.2f} ms from the first log write to the committer's return")
        if len(self.solo_prep_ns):
            text += (f"; a commit alone starts a median {np.median(self.solo_prep_ns) / 1e6:.2f} ms after its fsync's data is on disk "
                     "(ordered extents and logging the inode)")
        if self.tick_ns:
            text += (f"; shared commits start on a jiffy ({1e9 / self.tick_ns:.0f} Hz, from their log writes' alignment), "
                     f"median {np.median(self.batch_ticks):.0f} jiffies after their last member's data is on disk (batching)")
        if self.returns_inferred:
            text += ("; the capture shows the fsyncs' starts only (btrfs_sync_file, no sys_exit_fsync), so each commit is taken to "
                     "end when its superblock write is durable (its completion with FUA, else the cache flush after it) and an "
                     "fsync to return with the last commit between its data on disk and its task's next write or fsync")
        return text


@dataclass
class WriteRequests:
    """The capture's write requests (the block_requests view), in issue order: read once
    for the log commits and, when the fsync returns are not seen, for inferring them."""

    ts: np.ndarray  # issue
    pid: np.ndarray
    dev: np.ndarray  # "major,minor" strings
    sector: np.ndarray
    nr: np.ndarray  # 512-byte sectors
    meta: np.ndarray  # RWBS 'M'
    fua: np.ndarray  # RWBS 'F' after 'W': a FUA write ('WFSM')
    complete: np.ndarray  # -1 where the completion was not seen

    @classmethod
    def load(cls, con) -> "WriteRequests":
        r = con.execute(
            "SELECT issue_ts AS ts, pid, dev, CAST(sector AS BIGINT) AS sector, CAST(bytes AS BIGINT) // 512 AS nr, meta, "
            "regexp_matches(rwbs, 'WF') AS fua, coalesce(complete_ts, -1) AS complete FROM block_requests "
            "WHERE write AND bytes > 0 AND issue_ts IS NOT NULL ORDER BY issue_ts").fetchnumpy()
        return cls(*(np.asarray(r[k], np.int64) for k in ("ts", "pid")), np.asarray(r["dev"].tolist(), dtype=object),
                   *(np.asarray(r[k], np.int64) for k in ("sector", "nr")), *(np.asarray(r[k], bool) for k in ("meta", "fua")),
                   np.asarray(r["complete"], np.int64))

    @cached_property
    def by_task(self) -> "ByPid":
        return ByPid(self.pid, self.ts)

    @cached_property
    def superblocks(self) -> np.ndarray:
        """Row numbers of the primary superblock writes. write_dev_supers: REQ_SYNC |
        REQ_META | REQ_PRIO (| REQ_FUA), so RWBS has 'M'."""
        return np.flatnonzero((self.sector == SUPER_SECTOR) & (self.nr == SUPER_SECTORS) & self.meta)

    @cached_property
    def log_writes(self) -> np.ndarray:
        """Metadata writes other than the superblock: the log tree's, inside an fsync."""
        return self.meta & (self.sector != SUPER_SECTOR)


def observe(req: WriteRequests, fsync_pid: np.ndarray, fsync_start: np.ndarray, fsync_end: np.ndarray) -> LogCommits | None:
    """The log commits of a capture with block requests and fsync spans, or None when it
    shows none (not btrfs, or no superblock write inside an fsync)."""
    ts, pid, meta = req.ts, req.pid, req.meta
    ok = fsync_end >= 0
    fpid, fstart, fend = fsync_pid[ok], fsync_start[ok], fsync_end[ok]
    spans = Spans(fpid, fstart, fend)
    by_pid = req.by_task
    commits = []  # (first log write, superblock issue, committer's return)
    claimed = np.zeros(len(fpid), dtype=bool)
    for k in req.superblocks:
        s = spans.containing(pid[k], ts[k])
        if s < 0:
            # On a device without FUA the superblock write follows a preflush, and the
            # block layer's flush sequence dispatches it from kblockd (kworker/N:1H) once
            # the flush completes: the committer is the fsync running now whose task
            # wrote log-tree blocks last. None: a transaction commit (btrfs-transaction).
            s = committer(spans, by_pid, req.log_writes, ts[k], claimed)
            if s < 0:
                continue
        mine = by_pid.between(fpid[s], fstart[s], ts[k] - 1)
        logw = mine[req.log_writes[mine]]
        if len(logw) and not claimed[s]:
            claimed[s] = True
            commits.append((ts[logw[0]], ts[k], fend[s]))
    if not commits:
        return None
    c = np.array(commits, dtype=np.int64)
    # Each write request with its completion (its issue time when the capture has none),
    # as the device model pairs them.
    completed = np.where(req.complete >= 0, req.complete, req.ts)
    ready = fstart.copy()
    for i in range(len(fpid)):
        mine = by_pid.between(fpid[i], fstart[i], fend[i])
        mine = mine[~meta[mine]]
        if len(mine):
            ready[i] = max(fstart[i], completed[mine].max())
    return _summarize(c, fstart, fend, ready)


def _summarize(c: np.ndarray, fstart: np.ndarray, fend: np.ndarray, ready: np.ndarray) -> LogCommits:
    """The log commits from `c` (per commit, in order: first log write, the point after
    which its members return, the committer's return) and the fsyncs (start, return, when
    each one's data was on disk)."""
    order = np.argsort(fend, kind="stable")
    lead, solo_prep = [], []
    for i, (log_start, sb, _end) in enumerate(c):
        nxt = c[i + 1, 1] if i + 1 < len(c) else np.iinfo(np.int64).max
        lo, hi = np.searchsorted(fend[order], [sb, nxt])
        members = order[lo:hi]
        members = members[fstart[members] < log_start]
        if len(members) >= 2:
            last = ready[members].max()
            lead.append((max(last, c[i - 1, 2]) if i else last, log_start))
        elif len(members) == 1:
            solo_prep.append(log_start - (max(ready[members[0]], c[i - 1, 2]) if i else ready[members[0]]))
    out = LogCommits(commit_ns=c[:, 2] - c[:, 0], shared=len(lead), solo=len(c) - len(lead),
                     solo_prep_ns=np.maximum(0, np.array(solo_prep, dtype=np.int64)))
    if lead:
        last, start = np.array(lead, dtype=np.int64).T
        tick = _jiffy(start)
        if tick:
            # Jiffy boundaries fall where the log writes start (their mean phase): count
            # the boundaries after the last member was ready up to the one that started it.
            phase = _phase(start, tick)
            out.tick_ns = tick
            out.batch_ticks = np.maximum(0, np.round((start - phase) / tick) - np.floor((last - phase) / tick)).astype(np.int64)
    return out


def observe_inode_writeback(fsync_pid: np.ndarray, fsync_start: np.ndarray, fsync_end: np.ndarray, fsync_ino: np.ndarray,
                            marks: dict, clears: dict) -> LogCommits | None:
    """The log commits of a capture without block requests, from inodes entering and
    leaving writeback (`marks`: ts, pid, ino of sb_mark_inode_writeback; `clears`: ts, ino
    of sb_clear_inode_writeback, both sorted by time), or None when it shows none.

    Every tree block btrfs writes is a page of its btree inode (BTRFS_BTREE_INODE_OBJECTID,
    inode 1), so btrfs_sync_log's log-tree writes put inode 1 under writeback in the
    committer's context, e.g. inside fio's fsync (inode 1 back 0.6 ms later, the fsync
    5.1 ms after the mark: the log root, the cache flush and the superblock in between):

             fio-23450 [000] 25836.899789: sb_mark_inode_writeback: dev 0,39 ino 1 ...
    kworker/u8:5-19196 [001] 25836.900418: sb_clear_inode_writeback: dev 0,39 ino 1 ...
             fio-23450 [000] 25836.904907: sys_exit_fsync:       0x0

    A commit is the first such mark inside an fsync, by its task; its members return after
    inode 1 next leaves writeback (its log writes done); an fsync's data is on disk when
    its file last left writeback before its return. The mark fires only when inode 1 had no
    page under writeback: a log commit while a transaction commit's tree blocks are in
    flight shows none, and its fsyncs count as members of the one before."""
    ok = fsync_end >= 0
    fpid, fstart, fend, fino = fsync_pid[ok], fsync_start[ok], fsync_end[ok], fsync_ino[ok]
    tree = marks["ino"] == BTREE_INO
    m_ts, m_pid = marks["ts"][tree], marks["pid"][tree]
    c_tree = clears["ts"][clears["ino"] == BTREE_INO]
    by_pid = ByPid(m_pid, m_ts)
    commits = []
    for i in range(len(fpid)):
        mine = by_pid.between(fpid[i], fstart[i], fend[i])
        if len(mine):
            log_start = m_ts[mine[0]]
            k = np.searchsorted(c_tree, log_start, side="left")
            written = min(c_tree[k], fend[i]) if k < len(c_tree) else fend[i]
            commits.append((log_start, written, fend[i]))
    if not commits:
        return None
    c = np.array(sorted(commits), dtype=np.int64)
    ready = fstart.copy()
    done_of = rows_by_task(clears["ino"])  # rows of each inode's completions, in time order
    for ino, calls in rows_by_task(fino).items():
        if ino < 0 or ino not in done_of:
            continue
        done = clears["ts"][done_of[ino]]
        for i in calls:
            k = np.searchsorted(done, fend[i], side="right") - 1
            if k >= 0 and done[k] >= fstart[i]:
                ready[i] = done[k]
    return _summarize(c, fstart, fend, ready)


def rows_by_task(pid: np.ndarray) -> dict:
    """Row numbers of each task, in row order."""
    order = np.argsort(pid, kind="stable")
    tasks, first = np.unique(pid[order], return_index=True)
    return dict(zip(tasks.tolist(), np.split(order, first[1:])))


class Spans:
    """fsync spans per task, for 'which span of this task holds time t': entry to
    return, or (btrfs_returns) to the latest the capture allows for the return."""

    def __init__(self, pid, start, end):
        self.pid, self.start, self.end = pid, start, end
        self._by_start = np.argsort(start, kind="stable")
        self._sorted_start = start[self._by_start]
        # The longest span bounds how far back a span running at t can have started.
        self._longest = int((end - start).max()) if len(start) else 0
        self.index = rows_by_task(pid)  # start order within a task

    def running(self, t) -> np.ndarray:
        """Spans of any task that hold time t."""
        starts = self._sorted_start
        lo, hi = np.searchsorted(starts, t - self._longest, side="left"), np.searchsorted(starts, t, side="right")
        cand = self._by_start[lo:hi]
        return cand[self.end[cand] >= t]

    def containing(self, p, t) -> int:
        mine = self.index.get(p)
        if mine is None:
            return -1
        j = np.searchsorted(self.start[mine], t, side="right") - 1
        return int(mine[j]) if j >= 0 and self.end[mine[j]] >= t else -1


def committer(spans: "Spans", by_pid: "ByPid", log_write: np.ndarray, t: int, claimed: np.ndarray) -> int:
    """The unclaimed fsync running at t whose task issued the latest log-tree write before t, or -1."""
    best, best_ts = -1, -1
    for s in spans.running(t):
        mine = by_pid.between(spans.pid[s], spans.start[s], t - 1)
        mine = mine[log_write[mine]]
        if len(mine) and not claimed[s] and by_pid.ts[mine[-1]] > best_ts:
            best, best_ts = int(s), int(by_pid.ts[mine[-1]])
    return best


class ByPid:
    """Rows (block requests, inode writeback marks) per task, in time order."""

    def __init__(self, pid, ts):
        self.ts = ts
        self.index = {p: (rows, ts[rows]) for p, rows in rows_by_task(pid).items()}

    def between(self, p, t0, t1) -> np.ndarray:
        mine = self.index.get(p)
        if mine is None:
            return np.zeros(0, np.int64)
        rows, mine_ts = mine
        return rows[mine_ts.searchsorted(t0, side="left"):mine_ts.searchsorted(t1, side="right")]


def _phasor(starts: np.ndarray, tick: int) -> complex:
    """The mean of the starts' positions in the jiffy as unit vectors: its angle is their
    circular mean offset, its length how concentrated they are (0 for uniform)."""
    return complex(np.exp(2j * np.pi * (starts % tick) / tick).mean())


def _phase(starts: np.ndarray, tick: int) -> float:
    """Where in the jiffy the starts fall: their circular mean offset, in ns."""
    return float(np.angle(_phasor(starts, tick)) / (2 * np.pi) * tick % tick)


def _jiffy(starts: np.ndarray) -> int:
    """The CONFIG_HZ period the batching commits' log writes line up with, 0 if none.
    A longer period that lines up also lines up its divisors' multiples, so the longest
    aligned one wins (4 ms over 1 ms on a HZ=250 kernel)."""
    if len(starts) < 10:
        return 0
    for hz in sorted(CONFIG_HZ):  # longest period first
        tick = 1_000_000_000 // hz
        if abs(_phasor(starts, tick)) >= ALIGNED:
            return tick
    return 0
