"""When btrfs fsyncs returned, for a capture that shows their start only.

btrfs_sync_file fires as fsync(2) enters btrfs; without syscalls:sys_exit_fsync (or
sys_exit_fdatasync) nothing marks the return. The block layer still shows each log
commit's end, and every fsync that joined that log transaction returns with it
(btrfs_sync_log, fs/btrfs/tree-log.c):

  * the committer, the task whose fsync issues the primary superblock write (4 KiB at
    sector 128, RWBS 'M'), returns when that write is durable: its completion on a
    device with FUA (RWBS 'WFSM'), else the completion of the post-flush the block
    layer issues for it (kblockd's 'FF' on the same device, right after). Measured on
    a 2-writer fio capture on loop0 that also recorded the syscalls: sys_exit_fsync
    came a median 14 us after that post-flush completed (808 commits, p90 67 us);
  * another fsync returns with a commit that started (its first log-tree write) after
    the fsync's own data writes completed, and ended before its task went on: dirtied
    a data page again (a write(2)) or called fsync again. When several commits fit, it
    is the last: an fsync whose data is on disk still waits for its ordered extents and
    logs its inode before it can join, so the commit right after its data (the first)
    often leaves without it. With the syscalls hidden, ten btrfs captures that have
    them (fio, dbench, fsync-heavy writers in a memory cgroup, a device with FUA; 193
    to 1,597 commits) find every commit, and the commits' median length within 10% of
    the real one.

An fsync that matches no commit (it found nothing to log, fell back to a transaction
commit, or the capture ended first) keeps no return.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.btrfs_log import ByPid, Spans, WriteRequests, committer


def infer(con, req: WriteRequests, pid: np.ndarray, start: np.ndarray, last_ts: int, dirty_pid: np.ndarray,
          dirty_ts: np.ndarray) -> np.ndarray:
    """Each fsync's return (ns) from the log commit it returned with, -1 where none
    matches. `req`: the capture's write requests; `pid`, `start`: the fsyncs; `last_ts`:
    the capture's end; `dirty_pid`, `dirty_ts`: the tasks' dirtying of data pages (not
    btrfs's metadata), time order. `con` gives the cache flushes."""
    ts, rpid, done, dev, meta, fua = req.ts, req.pid, req.complete, req.dev, req.meta, req.fua
    flushes = _Flushes(con)
    end = np.full(len(pid), -1, np.int64)
    window = _windows(pid, start, last_ts, ByPid(dirty_pid, dirty_ts))
    spans = Spans(pid, start, window)
    by_pid = req.by_task
    log_write = req.log_writes
    claimed = np.zeros(len(pid), dtype=bool)
    commits = []  # (first log write, superblock issue, end) of each commit, in superblock order
    for k in req.superblocks:
        s = spans.containing(rpid[k], ts[k])
        if s < 0 or claimed[s]:
            s = committer(spans, by_pid, log_write, ts[k], claimed)
            if s < 0:
                continue  # a transaction commit's superblock (btrfs-transaction)
        mine = by_pid.between(pid[s], start[s], ts[k] - 1)
        logw = mine[log_write[mine]]
        if len(logw):
            # A superblock write whose completion is missing (lost, or after the capture)
            # still closes its commit; nobody's return is known from it.
            claimed[s] = True
            end[s] = -1 if done[k] < 0 else int(done[k]) if fua[k] else flushes.after(dev[k], int(done[k]))
            commits.append((ts[logw[0]], ts[k], end[s]))
    if not commits:
        return end
    log_start, sb_issue, commit_end = np.array(commits, dtype=np.int64).T
    # Commits in order of their end (their superblock's issue where the end is unknown).
    order = np.argsort(np.where(commit_end >= 0, commit_end, sb_issue), kind="stable")
    log_start, commit_end = log_start[order], commit_end[order]
    ends_by = np.where(commit_end >= 0, commit_end, sb_issue[order])
    for m in np.flatnonzero(~claimed):
        # Its data on disk: its own data writes (issued before the capture's window
        # for it closed) completed.
        data = by_pid.between(pid[m], start[m], window[m])
        data = data[~meta[data]]
        if len(data) and done[data].min() < 0:
            continue  # a data write's completion is missing: when it was ready is not known
        ready = max(int(start[m]), int(done[data].max())) if len(data) else int(start[m])
        end[m] = _last_commit(log_start, commit_end, ends_by, ready, int(window[m]))
    return end


def _last_commit(log_start: np.ndarray, commit_end: np.ndarray, ends_by: np.ndarray, ready: int, window: int) -> int:
    """The end of the last commit (in end order) that started after `ready` and ended by
    `window`, or -1. Walks back from the last one ending by `window` and stops at the
    first that ended before `ready` (it, and every earlier one, started before it)."""
    i = int(np.searchsorted(ends_by, window, side="right")) - 1
    while i >= 0 and ends_by[i] >= ready:
        if log_start[i] > ready:
            return int(commit_end[i])
        i -= 1
    return -1


def _windows(pid: np.ndarray, start: np.ndarray, last_ts: int, dirtying: ByPid) -> np.ndarray:
    """The latest each fsync can have returned: before its task dirties a data page
    again (a write(2); fsync dirties only btrfs's metadata pages) or calls fsync again,
    else the capture's end."""
    window = np.full(len(pid), last_ts, np.int64)
    order = np.lexsort((start, pid))
    same = pid[order][1:] == pid[order][:-1]
    window[order[:-1][same]] = start[order][1:][same] - 1
    for i in range(len(pid)):
        after = dirtying.between(pid[i], start[i] + 1, window[i])
        if len(after):
            window[i] = dirtying.ts[after[0]] - 1
    return window


class _Flushes:
    """Completed cache flushes (empty 'FF' requests) per device, by issue time."""

    def __init__(self, con):
        r = con.execute("SELECT dev, issue_ts, complete_ts FROM block_requests WHERE flush AND bytes = 0 "
                        "AND issue_ts IS NOT NULL AND complete_ts IS NOT NULL ORDER BY issue_ts").fetchnumpy()
        devs = np.asarray(r["dev"].tolist(), dtype=object)
        issue, complete = np.asarray(r["issue_ts"], np.int64), np.asarray(r["complete_ts"], np.int64)
        self.by_dev = {d: (issue[devs == d], complete[devs == d]) for d in set(devs.tolist())}

    def after(self, dev, t: int) -> int:
        """The completion of the first flush of `dev` issued at or after t, else t."""
        issue, complete = self.by_dev.get(dev, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        i = np.searchsorted(issue, t, side="left")
        return int(complete[i]) if i < len(issue) else t
