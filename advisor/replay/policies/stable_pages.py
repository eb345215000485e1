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
sync_file_range / fsync calls on that inode do (and btrfs page writebacks where the
capture recorded them), through the device model's FIFO; a later dirtying of a page
whose IO has not completed waits for the completion under `always-wait`, and under
`wait-if-required` only if the device needs stable pages. A write syscall's latency is
the capture's median write (or the description's) plus its waits. Dirtying is replayed
open-loop: removing a wait does not pull the writer's later writes earlier.
"""

from __future__ import annotations

import numba
import numpy as np

from advisor.replay.pages import page_ranks
from advisor.replay.policies.base import Policy, ProblemModel, ms
from advisor.replay.workload import Workload

ALWAYS_WAIT = Policy("always-wait", False, "3.0 to 3.8 (RHEL 6 before 2.6.32-358.15.1)",
                     "wait_for_stable_page → wait_on_page_writeback for every write to a page under writeback")
WAIT_IF_REQUIRED = Policy("wait-if-required", True, "3.9-rc1 and later",
                          "wait_for_stable_page waits only if the bdi requires stable pages (stable_writes)")
BASE_WRITE_NS = 5_000  # a 4 KiB buffered write without waits, when the capture has no write syscalls


def _not_applicable(w: Workload) -> str | None:
    if not len(w.dirty_ts):
        return "no page dirtying in the workload"
    if not len(_submissions(w)[0]):
        return "no writeback submissions the model can place (sync_file_range, fsync with a known file, btrfs page writeback)"
    return None


def _submissions(w: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The writeback submissions the model places, in time order: when the IO starts,
    which inode, and the task that made them. sync_file_range(SYNC_FILE_RANGE_WRITE)
    builds its requests under a block plug (writepages) that is flushed as it finishes,
    so its IO starts when the call returns (stable-pages-ext4: the request is issued a
    median 28 us after the entry, 21 us before the exit); fsync submits first and then
    waits, so its IO starts at the call."""
    ts, ino, pid = [], [], []
    for kind in ("sync_file_range", "fsync"):
        o = w.op(kind)
        known = o.ino >= 0
        at = np.where(o.end >= 0, o.end, o.start) if kind == "sync_file_range" else o.start
        ts.append(at[known])
        ino.append(o.ino[known])
        pid.append(o.pid[known])
    order = np.argsort(np.concatenate(ts), kind="stable")
    return np.concatenate(ts)[order], np.concatenate(ino)[order], np.concatenate(pid)[order]


@numba.njit(cache=True)
def _waits(ev_ts, ev_inode, ev_page, ev_writer, ev_recorded_wait, sub_ts, sub_inode, sub_writer, service_ns, serial, n_pages, n_inodes):
    """Per dirtying event (at the time its write asked for the page): how long it would
    wait for the page's writeback. Submission j's IO takes service_ns[j]; a serial
    (queue depth 1) device starts it when the previous one completed. Pages and inodes
    are dense numbers (`ev_page` < n_pages, `ev_inode` < n_inodes; `sub_inode` -1 for
    an inode nothing dirtied).

    Closed loop per writer: the capture's timeline already holds the waits that really
    happened (`ev_recorded_wait`, on the first event of each write); a writer's later
    events move by the difference between the predicted and the recorded wait, and so
    do its own submissions (`sub_writer`, -1 for a task that dirtied nothing): fio's
    sync_file_range after its 64th write stays right after it, and the next pass's
    first write right after the call, as recorded.

    A submission takes its inode's pending pages without looking at any other inode's:
    each inode keeps a list (linked through `next_of`, newest first) of the events that
    made a page pending for it. An entry is stale when a later event moved its page to
    another inode (two inodes whose pages share a key), so entries are checked against
    `pending_for` when taken."""
    out = np.zeros(len(ev_ts), dtype=np.float64)
    shift = np.zeros(ev_writer.max() + 1 if len(ev_writer) else 1, dtype=np.float64)
    wb_until = np.full(n_pages, -np.inf)  # when the page's latest writeback completes
    pending_for = np.full(n_pages, -1, dtype=np.int64)  # dirty and not submitted: the inode it belongs to
    newest = np.full(n_inodes, -1, dtype=np.int64)  # the inode's latest list entry
    next_of = np.empty(len(ev_ts), dtype=np.int64)  # list entry → the one before it, -1 at the end
    free = 0.0
    j = 0
    for i in range(len(ev_ts)):
        t = ev_ts[i] + shift[ev_writer[i]]
        while j < len(sub_ts):
            at = sub_ts[j] + (shift[sub_writer[j]] if sub_writer[j] >= 0 else 0.0)  # moved with its task
            if at > t:
                break
            # Submit the inode's dirty pages: one FIFO transfer, completion after the latency.
            x = sub_inode[j]
            start = max(at, free)
            done = start + service_ns[j]
            taken = 0
            if x >= 0:
                e = newest[x]
                while e >= 0:
                    p = ev_page[e]
                    if pending_for[p] == x:
                        wb_until[p] = done
                        pending_for[p] = -1
                        taken += 1
                    e = next_of[e]
                newest[x] = -1  # every entry was taken or stale
            if taken > 0:
                free = done if serial else start
            j += 1
        p = ev_page[i]
        if wb_until[p] > t:
            out[i] = wb_until[p] - t
        shift[ev_writer[i]] += out[i] - ev_recorded_wait[i]
        x = ev_inode[i]
        if pending_for[p] != x:
            next_of[i] = newest[x]
            newest[x] = i
        pending_for[p] = x
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
    for p in np.unique(w.page_wait_pid):
        mine = np.flatnonzero(writes.pid == p)
        waits = w.page_wait_ts[w.page_wait_pid == p]  # in time order
        inside = np.searchsorted(waits, writes.end[mine], side="right") > np.searchsorted(waits, writes.start[mine], side="left")
        own[mine[inside]] = base
    return own


def _wanted_at(w: Workload, write_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """When each dirtying's write wanted its page (the syscall's start), and the wait the
    capture recorded for it: its write's duration beyond the median write, on the first
    event of each write."""
    writes = w.op("write")
    if not len(writes):
        return w.dirty_ts.astype(np.float64), np.zeros(len(w.dirty_ts))
    has = write_of >= 0
    safe = np.maximum(write_of, 0)
    want = np.where(has, writes.start[safe], w.dirty_ts).astype(np.float64)
    dur = np.where(writes.complete, writes.end - writes.start, 0).astype(np.float64)
    base = _base_write_ns(w)
    first = has & np.concatenate(([True], write_of[1:] != write_of[:-1]))
    recorded = np.where(first, np.maximum(0.0, dur[safe] - base), 0.0)
    return want, recorded


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
    sub_ts, sub_ino, sub_pid = _submissions(w)
    # A write waits in write_begin, right after it enters: its page is wanted at the
    # syscall's start (the dirtying event comes after the wait, at write_end).
    want, recorded = _wanted_at(w, write_of)
    writer = _dense(w.dirty_pid)[1]
    sub_writer = _dense(w.dirty_pid, sub_pid)[1]
    inodes, inode = _dense(w.dirty_ino)
    pages, page_of_event = page_ranks(w)
    service = w.device.service_times_ns(_batch_bytes(w, sub_ts, sub_ino))
    sub_inode = _dense(inodes, sub_ino)[1]
    serial = w.device.queue_depth < 1.5
    if np.all(want[1:] >= want[:-1]):
        # Already in the order a stable sort would give (no write spans: want is the
        # dirtying time): skip five reordered copies of every event.
        return _waits(want, inode, page_of_event, writer, recorded, sub_ts, sub_inode, sub_writer, service, serial, len(pages), len(inodes))
    order = np.argsort(want, kind="stable")
    waits = np.zeros(len(want))
    waits[order] = _waits(want[order], inode[order], page_of_event[order], writer[order], recorded[order],
                          sub_ts, sub_inode, sub_writer, service, serial, len(pages), len(inodes))
    return waits


MODEL = ProblemModel(
    problem="stable-page-wait",
    commit="1d1d1a767206fbe5d4c69493b7e6d2a8d08cc0a0 (with 7d311cdab663)",
    policies=(ALWAYS_WAIT, WAIT_IF_REQUIRED),
    not_applicable=_not_applicable,
    observed=_observed,
    simulate=_simulate,
)
