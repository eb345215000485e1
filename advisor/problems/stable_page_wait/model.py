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
sync_file_range / fsync calls on that inode do, and when the flusher (or a sync) writes
the inode (writeback_single_inode), through the device model's FIFO; a later dirtying of
a page whose IO has not completed waits for the completion under `always-wait`, and under
`wait-if-required` only if the device needs stable pages. An fsync returns only once its
pages' writeback has completed (file_write_and_wait_range), so its IO is done by the
call's recorded return however slow the FIFO: a writer's own write after its fsync never
finds that fsync's pages under writeback. A dbench client writes, fsyncs and writes the
file again: what makes it wait is the flusher's expired-inode pass putting its pages under
writeback behind a queue of other IO. A write syscall's latency is
the capture's median write (or the description's) plus its waits. Dirtying is replayed
open-loop: removing a wait does not pull the writer's later writes earlier.
"""

from __future__ import annotations

import numba
import numpy as np

from advisor.replay.pages import page_ranks
from advisor.replay.model import Policy, ProblemModel, ms
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


def _submissions(w: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The writeback submissions the model places, in time order: when the IO starts,
    which inode, the task that made them (-1: the flusher), and when the IO is done at
    the latest (-1: no bound). sync_file_range(SYNC_FILE_RANGE_WRITE) builds its requests
    under a block plug (writepages) that is flushed as it finishes, so its IO starts when
    the call returns (stable-pages-ext4: the request is issued a median 28 us after the
    entry, 21 us before the exit); fsync submits first and then waits, so its IO starts at
    the call and is done by its return. The flusher's inode writebacks are traced as each
    inode's pages have been submitted."""
    ts, ino, pid, deadline = [], [], [], []
    for kind in ("sync_file_range", "fsync"):
        o = w.op(kind)
        known = o.ino >= 0
        at = np.where(o.end >= 0, o.end, o.start) if kind == "sync_file_range" else o.start
        ts.append(at[known])
        ino.append(o.ino[known])
        pid.append(o.pid[known])
        deadline.append(o.end[known] if kind == "fsync" else np.full(int(known.sum()), -1, np.int64))
    ts.append(w.inode_written_ts)
    ino.append(w.inode_written_ino)
    pid.append(np.full(len(w.inode_written_ts), -1, np.int64))
    deadline.append(np.full(len(w.inode_written_ts), -1, np.int64))
    order = np.argsort(np.concatenate(ts), kind="stable")
    return tuple(np.concatenate(a)[order] for a in (ts, ino, pid, deadline))


@numba.njit(cache=True)
def _waits(ev_ts, ev_inode, ev_page, ev_writer, ev_recorded_wait, sub_ts, sub_inode, sub_writer, sub_deadline, service_ns,
           transfer_ns, serial, n_pages, n_inodes, n_writers, pages_per_request):
    """Per dirtying event (at the time its write asked for the page): how long it would
    wait for the page's writeback. Submission j's IO takes service_ns[j]; a serial
    (queue depth 1) device starts it when the previous one completed. Pages and inodes
    are dense numbers (`ev_page` < n_pages, `ev_inode` < n_inodes; `sub_inode` -1 for
    an inode nothing dirtied), writers too (`ev_writer`, `sub_writer` < n_writers; -1
    for the flusher).

    Closed loop per writer: the capture's timeline already holds the waits that really
    happened (`ev_recorded_wait`, on the first event of each write); a writer's later
    events move by the difference between the predicted and the recorded wait, and so
    do its own submissions: fio's sync_file_range after its 64th write stays right after
    it, and the next pass's first write right after the call, as recorded. Each writer
    goes through its own events and submissions in its recorded order, and the writers
    and the flusher's submissions are merged by their moved times: a writer the replay
    has moved never sees another writer's or its own future out of order.

    A submission takes its inode's pending pages without looking at any other inode's:
    each inode keeps a list (linked through `next_of`, newest first) of the events that
    made a page pending for it. An entry is stale when a later event moved its page to
    another inode (two inodes whose pages share a key), so entries are checked against
    `pending_for` when taken."""
    out = np.zeros(len(ev_ts), dtype=np.float64)
    shift = np.zeros(n_writers, dtype=np.float64)
    wb_until = np.full(n_pages, -np.inf)  # when the page's latest writeback completes
    # The fsync whose writeback the page is under: its writer and recorded return (a
    # writer's events after its own fsync returned cannot find that fsync's pages under
    # writeback).
    fsync_writer = np.full(n_pages, -1, dtype=np.int64)
    fsync_end = np.zeros(n_pages, dtype=np.float64)
    pending_for = np.full(n_pages, -1, dtype=np.int64)  # dirty and not submitted: the inode it belongs to
    newest = np.full(n_inodes, -1, dtype=np.int64)  # the inode's latest list entry
    next_of = np.empty(len(ev_ts), dtype=np.int64)  # list entry → the one before it, -1 at the end
    batch = np.empty(n_pages, dtype=np.int64)  # the pages one submission takes
    # Each writer's events and own submissions, in recorded order (CSR lists).
    ev_of = np.argsort(ev_writer, kind="mergesort")
    ev_first = np.searchsorted(ev_writer[ev_of], np.arange(n_writers + 1))
    own = np.flatnonzero(sub_writer >= 0)
    sub_of = own[np.argsort(sub_writer[own], kind="mergesort")]
    sub_first = np.searchsorted(sub_writer[sub_of], np.arange(n_writers + 1))
    flusher = np.flatnonzero(sub_writer < 0)
    ev_next, sub_next = ev_first[:-1].copy(), sub_first[:-1].copy()
    fj = 0
    free = 0.0
    while True:
        # The next step: the writer whose next item (event or own submission) comes first
        # in moved time, or the flusher's next submission.
        best, best_t, best_is_sub = -1, np.inf, False
        for wr in range(n_writers):
            e = ev_of[ev_next[wr]] if ev_next[wr] < ev_first[wr + 1] else -1
            j = sub_of[sub_next[wr]] if sub_next[wr] < sub_first[wr + 1] else -1
            if e < 0 and j < 0:
                continue
            is_sub = j >= 0 and (e < 0 or sub_ts[j] <= ev_ts[e])
            t = (sub_ts[j] if is_sub else ev_ts[e]) + shift[wr]
            if t < best_t:
                best, best_t, best_is_sub = wr, t, is_sub
        if fj < len(flusher) and sub_ts[flusher[fj]] <= best_t:
            j = flusher[fj]
            fj += 1
            at = float(sub_ts[j])
        elif best >= 0 and best_is_sub:
            j = sub_of[sub_next[best]]
            sub_next[best] += 1
            at = best_t
        elif best >= 0:
            i = ev_of[ev_next[best]]
            ev_next[best] += 1
            p = ev_page[i]
            own_fsync_done = fsync_writer[p] == best and ev_ts[i] >= fsync_end[p]
            if wb_until[p] > best_t and not own_fsync_done:
                out[i] = wb_until[p] - best_t
            shift[best] += out[i] - ev_recorded_wait[i]
            x = ev_inode[i]
            if pending_for[p] != x:
                next_of[i] = newest[x]
                newest[x] = i
            pending_for[p] = x
            continue
        else:
            break
        # Submit the inode's dirty pages: one FIFO transfer, completion after the latency.
        x = sub_inode[j]
        start = max(at, free)
        done = start + service_ns[j]
        if sub_deadline[j] >= 0:  # an fsync returns once its IO is done
            done = min(done, sub_deadline[j] + (at - sub_ts[j]))
        taken = 0
        if x >= 0:
            e = newest[x]
            while e >= 0:
                p = ev_page[e]
                if pending_for[p] == x:
                    batch[taken] = p
                    pending_for[p] = -1
                    taken += 1
                e = next_of[e]
            newest[x] = -1  # every entry was taken or stale
            # writepages submits in index order and each request completes on its own:
            # the pages of request r of n are done after the batch's fixed latency and r+1
            # n-ths of its transfer, not when the whole batch is (a 50 MB inode's first
            # pages are clean long before its last; a 256 KiB batch is one request).
            order = np.sort(batch[:taken])
            fixed = done - transfer_ns[j]
            n_req = (taken + pages_per_request - 1) // pages_per_request
            for k in range(taken):
                r = k // pages_per_request
                wb_until[order[k]] = min(done, fixed + transfer_ns[j] * (r + 1) / n_req)
                fsync_writer[order[k]] = sub_writer[j] if sub_deadline[j] >= 0 else -1
                fsync_end[order[k]] = sub_deadline[j]
        if taken > 0:
            # The transfers share the device's bandwidth and go one after another; only
            # the fixed latency overlaps, to the queue depth. A flusher pass of 16 MB on
            # a 40 MB/s device keeps the next submission's pages under writeback ~400 ms.
            free = done if serial else start + transfer_ns[j]
    return out


def _dense(values: np.ndarray, of: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (sorted), and for each of `of` (default: `values`) its index
    among them, -1 when absent. A sort, not np.unique: its hash table is slower here."""
    s = np.sort(values)
    distinct = s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s
    if of is None:
        return distinct, np.searchsorted(distinct, values)
    if not len(distinct):
        return distinct, np.full(len(of), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(distinct, of), len(distinct) - 1)
    return distinct, np.where(distinct[pos] == of, pos, -1)


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
    journal); one with a wait, the median write (the wait's length is not traced)."""
    writes = w.op("write")
    if not len(writes) or len(writes) != n:
        return np.full(n, base)
    own = np.where(writes.complete, writes.end - writes.start, base).astype(np.float64)
    own[_writes_with_waits(w)] = base
    return own


def _wanted_at(w: Workload, write_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """When each dirtying's write wanted its page (the syscall's start), and the wait the
    capture recorded for it: on the first event of a write during which the capture shows
    the writer waiting on page writeback, the write's duration beyond the median write.
    A write that is merely slow (CPU taken by others, the journal) has no recorded wait:
    taking every write's excess over the median for one let four dbench clients run half
    a second ahead of themselves."""
    writes = w.op("write")
    if not len(writes):
        return w.dirty_ts.astype(np.float64), np.zeros(len(w.dirty_ts))
    has = write_of >= 0
    safe = np.maximum(write_of, 0)
    want = np.where(has, writes.start[safe], w.dirty_ts).astype(np.float64)
    dur = np.where(writes.complete, writes.end - writes.start, 0).astype(np.float64)
    waited = _writes_with_waits(w)
    base = _base_write_ns(w)
    # The first event of each write: writers interleave, so a write's events need not be
    # adjacent (four dbench clients: charging one write's 420 ms to three of its events
    # ran that writer a second ahead of itself).
    first = np.zeros(len(write_of), dtype=bool)
    first[np.unique(np.where(has, write_of, -1), return_index=True)[1]] = True
    first &= has & waited[safe]
    recorded = np.where(first, np.maximum(0.0, dur[safe] - base), 0.0)
    return want, recorded


def _writes_with_waits(w: Workload) -> np.ndarray:
    """Per write syscall: did the capture record its task waiting on page writeback inside it."""
    writes = w.op("write")
    out = np.zeros(len(writes), dtype=bool)
    for p in np.unique(w.page_wait_pid):
        mine = np.flatnonzero(writes.pid == p)
        waits = w.page_wait_ts[w.page_wait_pid == p]  # in time order
        out[mine] = np.searchsorted(waits, writes.end[mine], side="right") > np.searchsorted(waits, writes.start[mine], side="left")
    return out


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
    stalled = per_write[per_write > 0] + base
    every = per_write + _own_write_ns(w, base, len(per_write))
    return {
        "write_count": int(len(per_write)),
        **_stalls(stalled),
        "write_max_ms": ms(every.max()) if len(every) else None,
        "stable_writes_required": required,
    }


def _predicted_waits(w: Workload, write_of: np.ndarray) -> np.ndarray:
    """Each dirtying event's wait for its page's writeback, in workload order."""
    sub_ts, sub_ino, sub_pid, sub_deadline = _submissions(w)
    # A write waits in write_begin, right after it enters: its page is wanted at the
    # syscall's start (the dirtying event comes after the wait, at write_end).
    want, recorded = _wanted_at(w, write_of)
    writers, writer = _dense(w.dirty_pid)
    sub_writer = _dense(w.dirty_pid, sub_pid)[1]
    inodes, inode = _dense(w.dirty_ino)
    pages, page_of_event = page_ranks(w)
    nbytes = _batch_bytes(w, sub_ts, sub_ino)
    service = w.device.service_times_ns(nbytes)
    transfer = np.minimum(service, nbytes * 1e9 / w.device.bandwidth)
    sub_inode = _dense(inodes, sub_ino)[1]
    serial = w.device.queue_depth < 1.5
    # Events in the order their writes wanted their pages (stable: a write's events in turn).
    order = np.argsort(want, kind="stable")
    waits = np.zeros(len(want))
    waits[order] = _waits(want[order], inode[order], page_of_event[order], writer[order], recorded[order], sub_ts, sub_inode,
                          sub_writer, sub_deadline, service, transfer, serial, len(pages), len(inodes), max(1, len(writers)),
                          max(1, int(w.device.median_request_bytes // w.folio_bytes)))
    return waits


MODEL = ProblemModel(
    problem="stable-page-wait",
    commit="1d1d1a767206fbe5d4c69493b7e6d2a8d08cc0a0 (with 7d311cdab663)",
    policies=(ALWAYS_WAIT, WAIT_IF_REQUIRED),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
