"""stable-page-wait: a write to a page under writeback waits for the IO, always or
only when the device needs stable pages.

Kernel path: generic_perform_write → ->write_begin (ext4_da_write_begin, xfs via
iomap_write_begin, block_write_begin) → grab_cache_page_write_begin →
wait_for_stable_page → folio_wait_stable (5.x: folio_wait_writeback). From 3.0 the
wait was unconditional (wait_on_page_writeback); "mm: only enforce stable page writes
if the backing device requires it" (1d1d1a767206, 3.9-rc1, with 7d311cdab663's per-bdi
flag) waits only when bdi_cap_stable_pages_required (now SB_I_STABLE_WRITES, set from
the queue's stable_writes).

The model: the pages of an inode are submitted for writeback when the workload's
sync_file_range / fsync calls on that inode do, when the flusher (or a sync) writes
pages of the inode (writeback_single_inode with wrote > 0), and when the capture shows a
writer putting its file under writeback outside those calls (sb_mark_inode_writeback in
its context: a posix_fadvise, a call the capture did not record). A later write that
wants a page whose IO has not completed waits for the completion under `always-wait`,
and under `wait-if-required` only if the device needs stable pages, and goes on a delay
after it drawn from the capture's own waits (resume.py). When the IO completes: where
the capture shows it (the inode leaving writeback, sb_clear_inode_writeback, and the data
requests completed before it), else after the device model's FIFO service time. An fsync
returns only once its pages' writeback has completed (file_write_and_wait_range), so its
IO is done by the call's recorded return: a writer's own write after its fsync never finds
that fsync's pages under writeback. A dbench client writes, fsyncs and writes the file
again: what makes it wait is the flusher putting its pages under writeback while a
throttled device still holds the flusher's previous pass (a 40 MiB/s loop device released
one pass's pages 396 ms after they were submitted). A write syscall's latency is its time
outside page waits plus its waits. If the capture's writers never waited inside a write,
a wait the policy adds delays the writer's later writes (closed loop); if they did, the
recorded timeline already holds those waits and the writers keep their recorded times.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from advisor.problems.stable_page_wait.resume import resume_draws, say_resume
from advisor.replay.distinct import distinct
from advisor.replay.loops import page_waits
from advisor.replay.model import Policy, ProblemModel, ms
from advisor.replay.pages import page_ranks
from advisor.replay.workload import Workload

ALWAYS_WAIT = Policy("always-wait", False, "wait_for_stable_page → wait_on_page_writeback for every write to a page under writeback")
WAIT_IF_REQUIRED = Policy("wait-if-required", True, "wait_for_stable_page waits only if the bdi requires stable pages (stable_writes)")
BASE_WRITE_NS = 5_000  # a 4 KiB buffered write without waits, when the capture has no write syscalls


def _not_applicable(w: Workload) -> str | None:
    if not len(w.dirty_ts):
        return "no page dirtying in the workload"
    if not len(_submissions(w)[0]):
        return "no writeback submissions the model can place (sync_file_range, fsync with a known file, btrfs page writeback)"
    return None


class Submissions(NamedTuple):
    """The writeback submissions the model places, in time order."""
    ts: np.ndarray  # when the IO starts
    ino: np.ndarray  # which inode
    pid: np.ndarray  # the task that made them (-1: the flusher)
    deadline: np.ndarray  # when the IO is done at the latest (an fsync's return; -1: no bound)
    done: np.ndarray  # when the capture shows the batch's IO done (-1: not shown; see _recorded_done)
    first_done: np.ndarray  # when its pages began to leave writeback (see _pages_leave_from)
    unrecorded: int  # how many are a writer's own, outside its recorded calls (see _other_starts)


def _submissions(w: Workload) -> Submissions:
    """The writeback submissions, in time order. sync_file_range(SYNC_FILE_RANGE_WRITE)
    builds its requests under a block plug (writepages) that is flushed as it finishes, so
    its IO starts when the call returns (stable-pages-ext4: the request is issued a median
    28 us after the entry, 21 us before the exit); fsync submits first and then waits, so
    its IO starts at the call and is done by its return. The flusher's inode writebacks are
    traced as each inode's pages have been submitted; a pass that wrote no pages
    (writeback_single_inode wrote=0: only the inode itself was dirty, or its pages were
    all under writeback already) puts nothing under writeback."""
    ts, ino, pid, deadline, since = [], [], [], [], []
    for kind in ("sync_file_range", "fsync"):
        o = w.op(kind)
        known = o.ino >= 0
        at = np.where(o.end >= 0, o.end, o.start) if kind == "sync_file_range" else o.start
        ts.append(at[known])
        ino.append(o.ino[known])
        pid.append(o.pid[known])
        deadline.append(o.end[known] if kind == "fsync" else np.full(int(known.sum()), -1, np.int64))
        # sync_file_range is placed at its return, its pages marked inside the call.
        since.append(np.where(o.end[known] >= 0, o.start[known], -1) if kind == "sync_file_range" else np.full(int(known.sum()), -1, np.int64))
    wrote = w.inode_written_pages if len(w.inode_written_pages) == len(w.inode_written_ts) else np.full(len(w.inode_written_ts), -1)
    some = wrote != 0
    ts.append(w.inode_written_ts[some])
    ino.append(w.inode_written_ino[some])
    pid.append(np.full(int(some.sum()), -1, np.int64))
    deadline.append(np.full(int(some.sum()), -1, np.int64))
    # A flusher pass is traced once its pages were sent; it began after the flusher's
    # previous pass was traced (flusher threads take inodes one at a time).
    since.append(np.concatenate(([-1], w.inode_written_ts[:-1]))[some] if len(w.inode_written_ts) else np.zeros(0, np.int64))
    other = _other_starts(w)
    ts.append(w.inode_marked_ts[other])
    ino.append(w.inode_marked_ino[other])
    pid.append(w.inode_marked_pid[other])
    deadline.append(np.full(int(other.sum()), -1, np.int64))
    since.append(np.full(int(other.sum()), -1, np.int64))
    order = np.argsort(np.concatenate(ts), kind="stable")
    sub_ts, sub_ino, sub_pid, sub_deadline, sub_since = (np.concatenate(a)[order] for a in (ts, ino, pid, deadline, since))
    done = _recorded_done(sub_ts, sub_ino, w.inode_completed_ts, w.inode_completed_ino)
    early = _done_before_traced(sub_ts, sub_ino, sub_since, w.inode_completed_ts, w.inode_completed_ino)
    done = np.where(early >= 0, early, done)
    return Submissions(sub_ts, sub_ino, sub_pid, sub_deadline, done, _pages_leave_from(sub_ts, done, w.write_done_ts),
                       int(other.sum()))


def _other_starts(w: Workload) -> np.ndarray:
    """Which of the capture's inodes entering writeback (sb_mark_inode_writeback, in the
    context of the task that put the first page there) are a writer's own writeback that
    no placed submission explains: by a task the capture shows making system calls (user
    space, not a kernel thread) that dirtied pages of that inode, not inside one of its
    sync_file_range or fsync calls on a known file. They come from calls the capture did
    not record: fio invalidates a file's cache as it opens it again
    (posix_fadvise(POSIX_FADV_DONTNEED) starts writeback of its dirty pages), an msync, a
    close that flushes a truncated file. On a fio rewrite of a 128 KiB file with
    sync_file_range every 64 writes, fio marked the inode at 408.055 ms between two
    pwrite64 calls, and its next write waited at 408.160 for page 0.

    Kernel threads' marks are not placed: the flusher's passes are (at
    writeback_single_inode), and jbd2 writing ordered data takes only the range its
    transaction logged, which the capture does not show (it redirties the delalloc pages
    it cannot write, so it shows as dirtying them too). Taken as every dirty page, jbd2's
    2,400 marks on a dbench run moved pages out of the flusher's later, slower batches,
    and 2 of the 18 writes the replay found waiting there no longer did."""
    callers = np.unique(np.concatenate([o.pid for o in w.ops.values()] + [np.zeros(0, np.int64)]))
    explained = np.ones(len(w.inode_marked_ts), bool)
    for p in np.intersect1d(np.unique(w.inode_marked_pid), callers):
        mine = w.inode_marked_pid == p
        explained[mine] = ~np.isin(w.inode_marked_ino[mine], w.dirty_ino[w.dirty_pid == p])
    for kind in ("sync_file_range", "fsync"):
        o = w.op(kind)
        placed = o.ino >= 0
        for p in np.intersect1d(np.unique(o.pid[placed]), np.unique(w.inode_marked_pid)):
            mine = np.flatnonzero(placed & (o.pid == p))
            mine = mine[np.argsort(o.start[mine], kind="stable")]
            marks = np.flatnonzero(w.inode_marked_pid == p)
            k = np.searchsorted(o.start[mine], w.inode_marked_ts[marks], side="right") - 1
            end = o.end[mine][np.maximum(k, 0)]
            explained[marks] |= (k >= 0) & ((end < 0) | (w.inode_marked_ts[marks] <= end))
    return ~explained


def _pages_leave_from(sub_ts: np.ndarray, done: np.ndarray, request_done_ts: np.ndarray) -> np.ndarray:
    """When a batch's pages began to leave writeback: the last data write request that
    completed between the submission and the batch's recorded end, else that end. The
    bio's completion ends the writeback of its pages one after another, in index order,
    and sb_clear_inode_writeback fires at the last one: on stable-pages-ext4, 43 us (median)
    after its one 256 KiB request completed, while fio's next 4 KiB writes to pages 1-4,
    2-3 us apart, no longer waited."""
    out = done.copy()
    if not len(request_done_ts):
        return out
    k = np.searchsorted(request_done_ts, done, side="right") - 1
    last = request_done_ts[np.maximum(k, 0)]
    inside = (done >= 0) & (k >= 0) & (last >= sub_ts)
    out[inside] = last[inside]
    return out


def _per_inode_in_time(sub_ts, sub_ino, done_ts, done_ino, clears_first: bool):
    """Submissions and completions (sb_clear_inode_writeback) as one list: inode, time,
    is-completion, and the order that walks each inode's rows in time; at equal times the
    completions first or last."""
    ino = np.concatenate((sub_ino, done_ino))
    ts = np.concatenate((sub_ts, done_ts))
    is_done = np.concatenate((np.zeros(len(sub_ts), bool), np.ones(len(done_ts), bool)))
    return ino, ts, is_done, np.lexsort((~is_done if clears_first else is_done, ts, ino))


def _done_before_traced(sub_ts: np.ndarray, sub_ino: np.ndarray, since: np.ndarray, done_ts: np.ndarray,
                        done_ino: np.ndarray) -> np.ndarray:
    """When a batch's IO was done before the submission was traced (-1: not so): the
    inode's last sb_clear_inode_writeback in (since, ts]. A device that completes a bio
    as it is submitted (zram, brd, pmem) or a fast one ends the writeback of the pages a
    sync_file_range call marked before the call returns, and of a flusher pass before
    its writeback_single_inode event. The clear cannot be an older batch's alone: once
    the call or pass has marked a page, the inode leaves writeback only with it."""
    out = np.full(len(sub_ts), -1, np.int64)
    if not len(sub_ts) or not len(done_ts):
        return out
    # A clear at the submission's own time comes before it (it has happened by then).
    ino, ts, is_done, order = _per_inode_in_time(sub_ts, sub_ino, done_ts, done_ino, clears_first=True)
    pos = np.arange(len(order))
    last_done = np.maximum.accumulate(np.where(is_done[order], pos, -1))
    rows = np.flatnonzero(~is_done[order])
    prev = last_done[rows]
    ok = prev >= 0
    prev_safe = np.maximum(prev, 0)
    which = order[rows]
    ok &= (ino[order][prev_safe] == ino[order][rows]) & (since[which] >= 0) & (ts[order][prev_safe] > since[which])
    out[which[ok]] = ts[order][prev_safe][ok]
    return out


def _recorded_done(sub_ts: np.ndarray, sub_ino: np.ndarray, done_ts: np.ndarray, done_ino: np.ndarray) -> np.ndarray:
    """When the capture shows each submission's IO done, from sb_clear_inode_writeback,
    which fires as an inode's last page leaves writeback (-1: not shown).

    The inode's first such event at or after the submission is its batch's end, unless
    the inode was submitted again before it: then the event ends the later batch too, and
    only bounds this one. A flusher pass at 1129 ms put pages 0-455 of a dbench file under
    writeback, another at 1358 ms its pages 48-270, and the inode left writeback at 1939
    ms; a write waited on page 271 from 1343 to 1525 ms, when the first batch was done. A
    bounded batch is done, at the latest, when the first batch submitted after it (of any
    inode) whose end is shown is: the device completes writeback in submission order
    (a throttled loop device released that 1129 ms pass 396 ms after it)."""
    n = len(sub_ts)
    out = np.full(n, -1, np.int64)
    if not n or not len(done_ts):
        return out
    # A completion at the same time as a submission comes after it.
    ino, ts, is_done, order = _per_inode_in_time(sub_ts, sub_ino, done_ts, done_ino, clears_first=False)
    pos = np.arange(len(order))
    big = len(order)
    # For each row: the next completion row and the next submission row after it (any inode).
    next_done = np.minimum.accumulate(np.where(is_done[order], pos, big)[::-1])[::-1]
    after = np.append(np.where(~is_done[order], pos, big)[1:], big)
    next_sub = np.minimum.accumulate(after[::-1])[::-1]
    sub_rows = np.flatnonzero(~is_done[order])
    nd = next_done[sub_rows]
    has = nd < big
    nd_safe = np.minimum(nd, big - 1)
    has &= ino[order][nd_safe] == ino[order][sub_rows]
    ns = np.minimum(next_sub[sub_rows], big - 1)
    resubmitted = (next_sub[sub_rows] < nd) & (ino[order][ns] == ino[order][sub_rows])
    which = order[sub_rows]  # index into the submissions
    end = np.where(has, ts[order][nd_safe], -1)
    exact = has & ~resubmitted
    out[which[exact]] = end[exact]
    bounded = which[has & resubmitted]
    if len(bounded):
        time_order = np.argsort(sub_ts, kind="stable")
        shown = np.full(n, np.inf)
        shown[which[exact]] = end[exact]
        later_first = np.empty(n)
        later_first[time_order] = np.minimum.accumulate(shown[time_order][::-1])[::-1]
        out[bounded] = np.minimum(end[has & resubmitted], later_first[bounded]).astype(np.int64)
    return out




def _dense(values: np.ndarray, of: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (sorted), and for each of `of` (default: `values`) its index
    among them, -1 when absent."""
    values_of = distinct(values)
    if of is None:
        return values_of, np.searchsorted(values_of, values)
    if not len(values_of):
        return values_of, np.full(len(of), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(values_of, of), len(values_of) - 1)
    return values_of, np.where(values_of[pos] == of, pos, -1)


def _write_of_event(w: Workload) -> np.ndarray:
    """For each dirtying event, the write syscall it belongs to (the pid's latest write
    started at or before it), or -1."""
    writes = w.op("write")
    if not len(writes):
        return np.full(len(w.dirty_ts), -1, dtype=np.int64)
    pid = np.concatenate((writes.pid, w.dirty_pid))
    ts = np.concatenate((writes.start, w.dirty_ts))
    is_span = np.concatenate((np.ones(len(writes), bool), np.zeros(len(w.dirty_ts), bool)))
    order = np.lexsort((~is_span, ts, pid))
    pos = np.where(is_span[order], np.arange(len(order)), 0)
    last_span_pos = np.maximum.accumulate(pos)
    span_of = order[last_span_pos]  # index into the concatenation
    ev_rows = ~is_span[order]
    same_pid = pid[order][ev_rows] == pid[span_of[ev_rows]]
    write_idx = np.where(is_span[span_of[ev_rows]] & same_pid, span_of[ev_rows], -1)
    out = np.full(len(w.dirty_ts), -1, dtype=np.int64)
    out[order[ev_rows] - len(writes)] = write_idx
    return out


def _per_write(w: Workload, waits: np.ndarray, write_of: np.ndarray) -> tuple[np.ndarray, float]:
    """Sum the waits of each write syscall; without write spans each dirtying is one write."""
    writes = w.op("write")
    if not len(writes):
        return waits, BASE_WRITE_NS
    per = np.zeros(len(writes), dtype=np.float64)
    ok = write_of >= 0
    np.add.at(per, write_of[ok], waits[ok])
    base = _base_write_ns(w)
    return per, base


def _base_write_ns(w: Workload) -> float:
    """A write without waits: the capture's median write syscall, else BASE_WRITE_NS."""
    durations = w.op("write").durations_ns()
    return float(np.median(durations)) if len(durations) else BASE_WRITE_NS


def _own_write_ns(w: Workload, base: float, n: int) -> np.ndarray:
    """Each write's time outside page waits, kept as recorded: a write with no wait on
    page writeback inside it took its own duration (page faults, block allocation, the
    journal, balance_dirty_pages sleeps); one with a wait, the median write and the
    balance_dirty_pages sleeps its task began inside it (the wait's own length is what the
    model predicts)."""
    writes = w.op("write")
    if not len(writes) or len(writes) != n:
        return np.full(n, base)
    own = np.where(writes.complete, writes.end - writes.start, base).astype(np.float64)
    waited = _writes_with_waits(w)
    own[waited] = base + _sleeps_inside(w, writes)[waited]
    return own


def _sleeps_inside(w: Workload, writes) -> np.ndarray:
    """Per write syscall: the balance_dirty_pages sleeps its task began inside it, in ns."""
    return _sum_inside(writes, w.throttle_pid, w.throttle_ts, w.throttle_ns)


def _sum_inside(writes, pid: np.ndarray, ts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per write syscall: the sum of `values` over its task's events (`pid`, `ts` in time
    order) from the call's start to its end, both included."""
    out = np.zeros(len(writes))
    for p in np.intersect1d(np.unique(pid), np.unique(writes.pid)):
        mine = np.flatnonzero(writes.pid == p)
        theirs = pid == p
        total = np.concatenate(([0], np.cumsum(values[theirs])))
        at = ts[theirs]
        out[mine] = total[np.searchsorted(at, writes.end[mine], side="right")] - total[np.searchsorted(at, writes.start[mine], side="left")]
    return out


def _wanted_at(w: Workload, write_of: np.ndarray) -> np.ndarray:
    """When each dirtying's write asked for its page. generic_perform_write takes the
    pages of a write one after another: write_begin (where it waits), write_end (where a
    clean page turns dirty: the dirtying event), then balance_dirty_pages_ratelimited
    (where the writer may sleep). So a page is wanted when the write's previous page was
    dirtied, or when a balance_dirty_pages sleep the writer began after that ended; the
    first page at the syscall's start. A 64 KiB pwrite64 dirtied its folios at pages 0,
    8, 12 and 14 within 1.5 ms and then waited 419 ms for page 15, which the flusher had
    put under writeback after the call began: wanted at the call's start, page 15 was
    still clean. A page already dirty makes no event, so the time is the earliest it can
    have been wanted. Dirtying outside a write syscall (or without write spans) is
    wanted when it happened."""
    writes = w.op("write")
    want = w.dirty_ts.astype(np.float64)
    if not len(writes):
        return want
    has = write_of >= 0
    start = writes.start[np.maximum(write_of, 0)].astype(np.float64)
    order = np.lexsort((w.dirty_ts, write_of))
    same = np.zeros(len(order), dtype=bool)
    same[1:] = write_of[order][1:] == write_of[order][:-1]
    previous = np.empty(len(order))
    previous[1:] = w.dirty_ts[order][:-1]
    want[order] = np.where(same, np.maximum(previous, start[order]), start[order])
    want = np.maximum(want, _throttled_until(w, want))
    return np.where(has, want, w.dirty_ts)


def _throttled_until(w: Workload, since: np.ndarray) -> np.ndarray:
    """Per dirtying event: the end of its task's last balance_dirty_pages sleep that began
    at or after `since` and before the event (-inf: none). A dbench client dirtied page 14
    at 38.8 ms, slept 152 ms there, and then waited for page 15, which the flusher had
    put under writeback at 185.8 ms."""
    out = np.full(len(w.dirty_ts), -np.inf)
    for pid in np.intersect1d(np.unique(w.throttle_pid), np.unique(w.dirty_pid)):
        mine = np.flatnonzero(w.dirty_pid == pid)
        sleeps = np.flatnonzero(w.throttle_pid == pid)  # in time order
        last = np.searchsorted(w.throttle_ts[sleeps], w.dirty_ts[mine], side="right") - 1
        ok = last >= 0
        k = sleeps[np.maximum(last, 0)]
        ok &= w.throttle_ts[k] >= since[mine]
        out[mine[ok]] = (w.throttle_ts[k] + w.throttle_ns[k])[ok]
    return out


def _writes_with_waits(w: Workload) -> np.ndarray:
    """Per write syscall: did the capture record its task waiting on page writeback inside it."""
    return _sum_inside(w.op("write"), w.page_wait_pid, w.page_wait_ts, np.ones(len(w.page_wait_ts))) > 0


def _batch_bytes(w: Workload, sub_ts: np.ndarray, sub_ino: np.ndarray) -> np.ndarray:
    """Bytes each submission writes: its inode's pages dirtied since the inode's
    previous submission (distinct pages)."""
    out = np.zeros(len(sub_ts))
    pages, page_of_event = page_ranks(w)
    for ino in np.unique(sub_ino):
        mine = np.flatnonzero(sub_ino == ino)
        ev = w.dirty_ino == ino
        slot = np.searchsorted(sub_ts[mine], w.dirty_ts[ev], side="left")
        ok = slot < len(mine)
        # One int64 per (submission, page) pair: slots and pages are both far below 2^31.
        pair = np.sort(slot[ok] * len(pages) + page_of_event[ev][ok])
        first = pair[np.concatenate(([True], pair[1:] != pair[:-1]))] if len(pair) else pair
        counts = np.bincount(first // len(pages), minlength=len(mine))
        out[mine] = counts * w.folio_bytes
    return out


def _stalls(write_ns: np.ndarray) -> dict:
    if not len(write_ns):
        return {"write_stall_count": 0, "write_stall_p50_ms": None, "write_stall_p99_ms": None, "write_stall_max_ms": None}
    return {
        "write_stall_count": int(len(write_ns)),
        "write_stall_p50_ms": ms(np.percentile(write_ns, 50)),
        "write_stall_p99_ms": ms(np.percentile(write_ns, 99)),
        "write_stall_max_ms": ms(write_ns.max()),
    }


def _observed(w: Workload) -> dict:
    writes = w.op("write")
    if not len(writes) or w.page_waits is None:
        return {}
    d = writes.durations_ns()
    return {"write_count": int(len(d)), "write_max_ms": ms(d.max()) if len(d) else None, "page_waits": w.page_waits}


def _simulate(w: Workload, policy: Policy) -> dict:
    required = bool(w.stable_writes)
    write_of = _write_of_event(w)
    if policy.fixed and not required:
        waits = np.zeros(len(w.dirty_ts))  # wait_for_stable_page returns at once, whatever the IO does
    else:
        waits = _predicted_waits(w, write_of)
    per_write, base = _per_write(w, waits, write_of)
    every = per_write + _own_write_ns(w, base, len(per_write))
    writes = w.op("write")
    if len(writes) == len(per_write):
        # Only the writes that returned in the capture, as _observed counts them: a
        # write still running when recording stopped (trace-cmd's own write of its
        # buffers, sys_enter_write with no sys_exit_write) has no recorded duration.
        per_write, every = per_write[writes.complete], every[writes.complete]
    stalled = every[per_write > 0]
    return {
        "write_count": int(len(per_write)),
        **_stalls(stalled),
        "write_max_ms": ms(every.max()) if len(every) else None,
        "stable_writes_required": required,
    }


def _predicted_waits(w: Workload, write_of: np.ndarray) -> np.ndarray:
    """Each dirtying event's wait for its page's writeback, in workload order."""
    subs = _submissions(w)
    want = _wanted_at(w, write_of)
    writers, writer = _dense(w.dirty_pid)
    sub_writer = _dense(w.dirty_pid, subs.pid)[1]
    inodes, inode = _dense(w.dirty_ino)
    pages, page_of_event = page_ranks(w)
    nbytes = _batch_bytes(w, subs.ts, subs.ino)
    service = w.device.service_times_ns(nbytes)
    transfer = np.minimum(service, nbytes * 1e9 / w.device.bandwidth)
    sub_inode = _dense(inodes, subs.ino)[1]
    serial = w.device.queue_depth < 1.5
    closed_loop = not _writes_with_waits(w).any()
    _say_where_io_ends(w, subs, closed_loop)
    resume, samples = resume_draws(w, len(want))
    say_resume(w, samples)
    # Events in the order their writes wanted their pages (stable: a write's events in turn).
    order = np.argsort(want, kind="stable")
    waits = np.zeros(len(want))
    waits[order] = page_waits(want[order], inode[order], page_of_event[order], writer[order], closed_loop, subs.ts, sub_inode,
                              sub_writer, subs.deadline, subs.done, service, transfer, serial, len(pages), len(inodes),
                              max(1, len(writers)), max(1, int(w.device.median_request_bytes // w.folio_bytes)), subs.first_done,
                              resume[order])
    return waits


def _say_where_io_ends(w: Workload, subs: Submissions, closed_loop: bool) -> None:
    """The replay's assumptions: where its writeback batches end, and whether writers move."""
    shown = int((subs.done >= 0).sum())
    if not closed_loop:
        loop = "writers keep their recorded times (the capture's writers waited inside writes, and its timeline holds those waits)"
    elif w.page_waits is None or not len(w.op("write")):
        # No waits recorded, or no write calls to put them in: nothing says they did not wait.
        missing = "waits on page writeback (writeback:folio_wait_writeback)" if w.page_waits is None else "write calls"
        loop = (f"a wait the policy adds delays the writer's later writes (the capture has no {missing}, so it cannot show "
                "whether its writers waited inside writes)")
    else:
        loop = "a wait the policy adds delays the writer's later writes (the capture's writers never waited inside a write)"
    text = (f"stable pages: {shown:,} of {len(subs.ts):,} writeback batches end where the capture shows their inode leave "
            "writeback (sb_clear_inode_writeback; a batch whose inode was written again before that ends with the first "
            f"later batch whose end is shown, if sooner), the others after the device model's service time; {loop}")
    if other := subs.unrecorded:
        text += (f"; {other:,} of the batches are a writer putting a file it dirtied under writeback outside its recorded calls "
                 "(sb_mark_inode_writeback in the writer's context: posix_fadvise, msync, a call not recorded), each taken as "
                 "all of the file's dirty pages")
    if text not in w.assumptions:
        w.assumptions.append(text)


MODEL = ProblemModel(
    problem="stable-page-wait",
    commit="1d1d1a767206fbe5d4c69493b7e6d2a8d08cc0a0 (with 7d311cdab663)",
    policies=(ALWAYS_WAIT, WAIT_IF_REQUIRED),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
