"""btrfs-full-fsync-fallback: fsync after page release, full vs fast.

Kernel path: btrfs_sync_file → btrfs_log_dentry_safe → btrfs_log_inode, then
btrfs_sync_log. Page release under memory pressure (btrfs_releasepage →
try_release_extent_mapping) set BTRFS_INODE_NEEDS_FULL_SYNC before 5e548b3201 ("btrfs: do
not set the full sync flag on the inode during page release", 5.9-rc1), so the next fsync
logged every extent the inode has in the current transaction, looking up each extent's
checksums in the csum tree (btrfs_lookup_csums_range) while other inodes' ordered extents
insert checksums into it: the lookups of concurrent fsyncs contend on the csum tree's locks.

The model, per fsync: the data dirtied since the inode's previous fsync is written (one
request, drawn from the device model), then the task logs its inode: `full-sync-on-release`
adds, when pages are being released (the workload shows reclaim), one checksum lookup per
extent of the inode in the current transaction (one extent per fsync'd write since the
transaction began; btrfs commits a transaction every 30 s), each costing CSUM_LOOKUP_NS
times the number of fsyncs running at once (the lock contention, serialised).
CSUM_LOOKUP_NS is an assumption, not a measurement: no capture here shows the lookups, and
the fix's commit message (5e548b32018d) gives only end-to-end throughput.

Then the log is synced, and that is shared (fs/btrfs/tree-log.c, btrfs_sync_log; see
advisor/replay/btrfs_log.py). A task joins the open log transaction once it has logged its
inode (start_log_trans), some preparation after its data is on disk (the ordered extents'
completion, then logging). The first to join commits, after the previous log commit has
finished (wait_log_commit); every member returns when the commit ends. A task that joins
after the commit's log writes began waits for it, then commits the next: with two tasks
ready 0.1 ms apart and 0.15 ms of preparation each, the first commits alone. Tasks ready
while a commit is being written log their inodes meanwhile and all join the next one,
which starts some time after the previous commit's end. Both times, each fsync's
preparation and a commit's start after the previous one, are drawn (in separate
permutations) from what the capture's lone commits took from their data on disk, or the
previous commit's end when that came later, to their first log write. A log transaction
more than one task joined is batched first on a rotational device (no SSD mount option):
the committer sleeps one jiffy at a time while log_batch moves, so the commit starts on a
jiffy boundary some jiffies after its last member is ready — the jiffy and the number of
jiffies as the capture's own shared log commits show them
(btrfs_log.LogCommits.batch_ticks, drawn in a fixed permutation of their quantiles),
re-applied whenever a late member joins. A commit's own length (log tree writes, cache
flush, superblock, post-flush) is drawn the same way from the capture's commits. Without
observed log commits (another filesystem, no block events, a synthetic workload) a commit
is a log write and a superblock write, each taking a cache flush (the device's RWBS F
requests, or one request's latency when longer), there is no preparation and no batching
sleep (SSD mode, what btrfs picks on a non-rotational device).

Closed loop per task: each task keeps its recorded work between fsyncs (from one fsync's
return to its next call) and runs its fsyncs at the policy's cost on the shared clock,
which also decides how many fsyncs fall in one transaction; `fsync_writer_mib_s` is the
fsync'd bytes over the busiest task's time (fio's group throughput for fsync=1 jobs). A
task that keeps a schedule (Ops.paced: a rate-limited writer, whose calls are spaced more
evenly than the gaps after each return) keeps its recorded call times instead, and calls
at once when its previous fsync returns late: a faster policy lowers its fsync latency,
not its throughput.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.device import permuted_quantiles
from advisor.replay.loops import shared_log
from advisor.replay.model import Policy, ProblemModel, ms
from advisor.replay.workload import Workload

COMMIT_INTERVAL_NS = 30_000_000_000  # btrfs default commit=30
CSUM_LOOKUP_NS = 2_000  # one extent's csum btree search in memory (assumed)

FULL_SYNC = Policy("full-sync-on-release", False, "try_release_extent_mapping sets BTRFS_INODE_NEEDS_FULL_SYNC; btrfs_log_inode logs every extent of the transaction")
FAST = Policy("fast-fsync", True, "page release leaves the flag alone; fsync logs only the extents new since the last one")


def _not_applicable(w: Workload) -> str | None:
    if w.filesystems is not None and "btrfs" not in w.filesystems:
        return "the capture shows no btrfs (no btrfs events, no btrfs log commit): this is btrfs's fsync and log tree"
    f = w.op("fsync").on("btrfs")
    if not len(f) or not (f.ino >= 0).any():
        return "no fsync of a file the workload dirtied"
    return None


def _observed(w: Workload) -> dict:
    d = w.op("fsync").on("btrfs").durations_ns()
    out = {}
    if len(d):
        out = {"fsync_count": int(len(d)), "fsync_mean_ms": ms(d.mean()), "fsync_p50_ms": ms(np.percentile(d, 50)),
               "fsync_p99_ms": ms(np.percentile(d, 99)), "fsync_max_ms": ms(d.max())}
    if w.log_commits is not None:  # counted from their superblock writes, with or without the fsyncs' returns
        out["log_commits"] = int(len(w.log_commits.commit_ns))
    return out


def _concurrency(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each fsync, how many fsyncs (itself included) were running when it started."""
    s = np.sort(start)
    e = np.sort(end)
    return np.searchsorted(s, start, side="right") - np.searchsorted(e, start, side="right")


def _simulate(w: Workload, policy: Policy) -> dict:
    f = w.op("fsync").on("btrfs")
    known = f.ino >= 0
    pid, start, ino = f.pid[known], f.start[known], f.ino[known]
    returned = f.returns()[known]  # seen, else inferred from the log commits
    end = np.where(returned >= 0, returned, start)
    paced = f.paced()[known]
    order = np.lexsort((start, pid))  # each task's fsyncs together, in time order
    pid, start, ino, end, paced = pid[order], start[order], ino[order], end[order], paced[order]
    data = _data_since_previous(w, start, ino)
    dev = w.device
    data_ns = np.where(data > 0, dev.service_times_ns(data, seed=1), 0.0)
    releasing = bool(w.reclaim_events)
    per_extent = CSUM_LOOKUP_NS * _concurrency(start, end) if (releasing and not policy.fixed) else np.zeros(len(start))
    commit_ns, batch_ticks, prep, wake, tick = _log_commit_draws(w, len(start))
    _, inode_slot = np.unique(ino, return_inverse=True)
    cost, busy, commits = shared_log(pid, start, _think_ns(pid, start, end), paced, data_ns, per_extent, inode_slot.astype(np.int64),
                                     COMMIT_INTERVAL_NS, commit_ns, batch_ticks, prep, wake, tick)
    return {
        "fsync_count": int(len(cost)),
        "fsync_mean_ms": ms(cost.mean()),
        "fsync_p50_ms": ms(np.percentile(cost, 50)),
        "fsync_p99_ms": ms(np.percentile(cost, 99)),
        "fsync_max_ms": ms(cost.max()),
        "log_commits": int(commits),
        # fio's group figure: all fsync'd bytes over the busiest writer's time.
        "fsync_writer_mib_s": round(float(data.sum()) / 2**20 / (busy.max() / 1e9), 3) if busy.max() > 0 else None,
        "pages_released": releasing,
    }


def _log_commit_draws(w: Workload, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Up to n log commits' lengths and batching jiffies, each of n fsyncs' preparation,
    up to n commits' start after the previous one (both drawn from the lone commits'
    preparation), and the jiffy (0: no batching): the capture's own, in a fixed
    permutation of their quantiles (sample values, as the device model draws them), else
    the device's. Each quantity has its own permutation (seed): drawn with one, a commit's
    length, its batching and its preparation would be rank-correlated, all slow together."""
    seen = w.log_commits
    if seen is None:
        dev = w.device
        # The log tree write and the superblock write, each flushing the device cache.
        return np.full(n, float(2 * max(dev.latency_ns, dev.flush_ns))), np.zeros(n, np.int64), np.zeros(n), np.zeros(n), 0
    ticks = permuted_quantiles(seen.batch_ticks, n, 3).astype(np.int64) if seen.tick_ns else np.zeros(n, np.int64)
    prep, wake = ((permuted_quantiles(seen.solo_prep_ns, n, 4).astype(np.float64), permuted_quantiles(seen.solo_prep_ns, n, 5).astype(np.float64))
                  if len(seen.solo_prep_ns) else (np.zeros(n), np.zeros(n)))
    return permuted_quantiles(seen.commit_ns, n, 2).astype(np.float64), ticks, prep, wake, int(seen.tick_ns)


def _data_since_previous(w: Workload, start: np.ndarray, ino: np.ndarray) -> np.ndarray:
    """Bytes each fsync writes: its inode's dirtying since the inode's previous fsync."""
    data = np.zeros(len(start))
    for x in np.unique(ino):
        mine = np.flatnonzero(ino == x)
        mine = mine[np.argsort(start[mine], kind="stable")]
        ev_ts = w.dirty_ts[w.dirty_ino == x]
        counts = np.diff(np.searchsorted(ev_ts, np.concatenate(([-1], start[mine])), side="right"))
        data[mine] = counts * w.folio_bytes
    return data


def _think_ns(pid: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """What each task did between its previous fsync's return and this fsync (its
    writes, as recorded): kept as it was, whatever the policy."""
    gap = np.zeros(len(start))
    if len(start) > 1:
        same = pid[1:] == pid[:-1]
        gap[1:] = np.where(same, np.maximum(0, start[1:] - end[:-1]), 0)
    return gap


MODEL = ProblemModel(
    problem="btrfs-full-fsync-fallback",
    commit="5e548b3201 (btrfs: do not set the full sync flag on the inode during page release)",
    policies=(FULL_SYNC, FAST),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
