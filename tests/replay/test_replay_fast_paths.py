"""The replay's fast paths (page history sorted once, the sweep as a forward scan over
page ranks, the stable-pages FIFO with per-inode pending lists) give exactly what the
plain algorithms give: each is checked against a direct implementation (a sort per
query, a heap, a scan of every pending page) on random workloads with the awkward cases
— equal times, rewrites, writeback events, pages of two inodes sharing a key, negative
keys, write spans that reorder the events, a serial device."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from advisor.replay import device
from advisor.replay.pages import dirty_at, page_ranks, sweep
from advisor.problems.stable_page_wait import model as stable_pages
from advisor.problems.stable_page_wait.resume import resume_draws
from advisor.replay.workload import Ops, Workload, page_key

# Inode 5 and 5 + 2^32 have the same page keys; inode -1 has negative ones.
INODES = (5, 9, 12, 5 + 2**32, -1)


def workload(seed: int, n: int = 3000, writes: bool = False, preset: str = "ssd", completions: bool = False) -> Workload:
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(0, 1_000_000, n // 2)).repeat(2)  # pairs of equal times
    ino = rng.choice(INODES, n)
    pid = rng.integers(0, 4, n)
    subs = np.sort(rng.integers(0, 1_000_000, 60))
    sub_ino = rng.choice((*INODES, 77, -1), 60)  # 77: an inode nothing dirtied; -1: unknown
    ops = {
        "fsync": Ops(np.zeros(30, np.int64), subs[:30], subs[:30] + 500, sub_ino[:30]),
        "sync_file_range": Ops(np.zeros(30, np.int64), subs[30:], subs[30:] + 50, sub_ino[30:]),
    }
    wait_ts = wait_pid = np.zeros(0, np.int64)
    if writes:  # write spans: an event is wanted at its write's start, out of time order
        starts = np.sort(rng.integers(0, 1_000_000, 200))
        ops["write"] = Ops(rng.integers(0, 4, 200), starts, starts + rng.integers(1, 40_000, 200), np.full(200, -1))
        if completions:  # writers that waited inside writes: the replay runs open loop
            wait_ts, wait_pid = starts[::10] + 1, ops["write"].pid[::10]
    wb = rng.integers(0, n, 300)
    written_ts = np.sort(rng.integers(0, 1_000_000, 40))  # the flusher's inode writebacks
    # The capture's ends of inode writeback and of data requests; a pass that wrote nothing.
    done_ts = np.sort(rng.integers(0, 1_000_000, 30)) if completions else np.zeros(0, np.int64)
    return Workload(
        source="random", page_size=4096, start_ts=0, end_ts=1_000_000,
        dirty_ts=ts, dirty_ino=ino, dirty_idx=rng.integers(0, 50, n), dirty_pid=pid,
        device=device.preset(preset), ops=ops,
        page_wb_ts=np.sort(rng.integers(0, 1_000_000, 300)), page_wb_key=page_key(ino[wb], rng.integers(0, 50, 300)),
        inode_wb_ts=np.sort(rng.integers(0, 1_000_000, 20)), inode_wb_ino=rng.choice(INODES, 20),
        inode_wb_all_written=rng.random(20) < 0.5,
        inode_written_ts=written_ts, inode_written_ino=rng.choice(INODES, 40),
        inode_written_pages=rng.choice((0, 3, 8), 40),
        inode_completed_ts=done_ts, inode_completed_ino=rng.choice(INODES, len(done_ts)),
        write_done_ts=np.sort(rng.integers(0, 1_000_000, 50 if completions else 0)),
        page_wait_ts=wait_ts, page_wait_pid=wait_pid, page_waits=len(wait_ts),
        stable_writes=True,
    )


def plain_dirty_at(w: Workload, t: int) -> np.ndarray:
    """Each page's last dirtying at or before t (a sort per query), unless written since: by
    a page-level event, or at inode level by a pass that wrote every page, or by any
    inode-level event when the inode has no page-level ones."""
    page_level = {int(k) >> 32 for k in w.page_wb_key}
    sel = w.dirty_ts <= t
    keys, ts = w.dirty_key[sel], w.dirty_ts[sel]
    last = {}
    for k, x in zip(keys.tolist(), ts.tolist()):
        last[k] = max(x, last.get(k, x))
    out = []
    for k in sorted(last):
        written = [x for kk, x in zip(w.page_wb_key, w.page_wb_ts) if kk == k and x <= t]
        written += [x for i, x, every in zip(w.inode_wb_ino, w.inode_wb_ts, w.inode_wb_all_written)
                    if i == k >> 32 and x <= t and (every or i not in page_level)]
        if not written or last[k] > max(written):
            out.append(k)
    return np.array(out, dtype=np.int64)


def plain_sweep(start_keys, ev_ts, ev_key, t0, page_ns, tagged):
    """The pass with a heap of (key, dirtied after t0) items, popped in key order."""
    heap = [int(k) * 2 for k in start_keys]
    heapq.heapify(heap)
    cursor, t, written, late, i = -1, float(t0), 0, 0, 0
    while i < len(ev_ts) and ev_ts[i] <= t0:
        i += 1
    while heap:
        item = heapq.heappop(heap)
        if item >> 1 <= cursor:
            continue
        cursor = item >> 1
        t += page_ns
        written += 1
        late += item & 1
        while not tagged and i < len(ev_ts) and ev_ts[i] <= t:
            if ev_key[i] > cursor:
                heapq.heappush(heap, int(ev_key[i]) * 2 + 1)
            i += 1
    return t, written, late, i


def plain_waits(w: Workload, write_of: np.ndarray) -> np.ndarray:
    """The stable-pages FIFO as a plain event loop: every writer's events and own
    submissions in recorded order, merged with the flusher's submissions by moved time,
    scanning every pending page at each submission; a wait ends with its drawn resume."""
    sub_ts, sub_ino, sub_pid, sub_deadline, sub_done, sub_first_done, _ = stable_pages._submissions(w)
    want = stable_pages._wanted_at(w, write_of)
    closed_loop = not stable_pages._writes_with_waits(w).any()
    resume = resume_draws(w, len(want))[0]
    pids, writer = np.unique(w.dirty_pid, return_inverse=True)
    sub_writer = [int(np.searchsorted(pids, p)) if p in pids else -1 for p in sub_pid]
    batch = np.zeros(len(sub_ts))
    for x in np.unique(sub_ino):
        mine = np.flatnonzero(sub_ino == x)
        ev = w.dirty_ino == x
        slot = np.searchsorted(sub_ts[mine], w.dirty_ts[ev], side="left")
        ok = slot < len(mine)
        pairs = np.unique(np.stack((slot[ok], w.dirty_key[ev][ok])), axis=1)
        batch[mine] = np.bincount(pairs[0], minlength=len(mine)) * w.folio_bytes
    service = w.device.service_times_ns(batch)
    transfer = np.minimum(service, batch * 1e9 / w.device.bandwidth)
    per_request = max(1, int(w.device.median_request_bytes // w.folio_bytes))
    serial = w.device.queue_depth < 1.5
    # Each writer's queue: (recorded time, is a submission, index), events before its own
    # submissions of the same time only when they come first in recorded order.
    queues = {wr: [] for wr in range(len(pids))}
    for i in np.argsort(want, kind="stable"):
        queues[writer[i]].append((want[i], 1, int(i)))
    for j in range(len(sub_ts)):
        if sub_writer[j] >= 0:
            queues[sub_writer[j]].append((sub_ts[j], 0, j))
    for q in queues.values():
        q.sort(key=lambda item: (item[0], item[1]))  # a submission first on a tie
    flusher = [j for j in range(len(sub_ts)) if sub_writer[j] < 0]
    out, shift, wb_until, owner, pending, free = np.zeros(len(want)), {}, {}, {}, {}, 0.0
    while True:
        heads = [(q[0][0] + shift.get(wr, 0.0), wr) for wr, q in queues.items() if q]
        t, wr = min(heads) if heads else (np.inf, None)
        if flusher and sub_ts[flusher[0]] <= t:
            j = flusher.pop(0)
            at = float(sub_ts[j])
        elif wr is not None and queues[wr][0][1] == 0:
            j, at = queues[wr].pop(0)[2], t
        elif wr is not None:
            i = queues[wr].pop(0)[2]
            k = w.dirty_key[i]
            own_done = k in owner and owner[k][0] == wr and want[i] >= owner[k][1]
            if k in wb_until and wb_until[k] > t and not own_done:
                out[i] = wb_until[k] - t + resume[i]
            if closed_loop:
                shift[wr] = shift.get(wr, 0.0) + out[i]
            pending[k] = w.dirty_ino[i]
            continue
        else:
            return out
        keys = sorted(k for k, v in pending.items() if v == sub_ino[j])
        start = max(at, free)
        done = start + service[j]
        if sub_done[j] >= 0:
            done = sub_done[j] + (at - sub_ts[j])
        if sub_deadline[j] >= 0:
            done = min(done, sub_deadline[j] + (at - sub_ts[j]))
        if sub_done[j] >= 0:  # page by page, from the first page's recorded end
            spread, per_step = max(0.0, done - (sub_first_done[j] + (at - sub_ts[j]))), 1
        else:  # request by request, over the transfer
            spread, per_step = transfer[j], per_request
        steps = -(-len(keys) // per_step)
        for n, k in enumerate(keys):
            wb_until[k] = min(done, done - spread + spread * (n // per_step + 1) / steps)
            owner[k] = (sub_writer[j], sub_deadline[j]) if sub_deadline[j] >= 0 else (-1, 0)
            del pending[k]
        if keys:
            free = done if serial else start + transfer[j]


@pytest.mark.parametrize("seed", range(4))
def test_dirty_at_equals_a_sort_per_query(seed):
    w = workload(seed)
    for t in (-1, 0, *np.random.default_rng(seed).integers(0, 1_000_000, 12), 2_000_000):
        assert np.array_equal(dirty_at(w, int(t)), plain_dirty_at(w, int(t)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tagged", [False, True])
def test_sweep_equals_the_heap(seed, tagged):
    w = workload(seed)
    pages, page_of_event = page_ranks(w)
    for t0 in (0, 200_000, 600_000):
        start = dirty_at(w, t0)
        after = w.dirty_ts > t0
        for page_ns in (10.0, 300.0):  # the pass outruns the writers, or they outrun it
            got = sweep(pages, start, w.dirty_ts[after], page_of_event[after], t0, page_ns, tagged)
            want = plain_sweep(start, w.dirty_ts[after], w.dirty_key[after], t0, page_ns, tagged)
            assert tuple(got) == want


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("writes, preset, completions", [(False, "ssd", False), (True, "ssd", False), (True, "hdd", False),
                                                        (True, "ssd", True), (False, "hdd", True)])
def test_stable_page_waits_equal_the_full_scan(seed, writes, preset, completions):
    w = workload(seed, writes=writes, preset=preset, completions=completions)
    write_of = stable_pages._write_of_event(w)
    got = stable_pages._predicted_waits(w, write_of)
    assert (got > 0).any()  # the workload does make writes wait
    subs = stable_pages._submissions(w)
    assert ((subs.done >= 0).sum() >= 5) == completions  # the capture's ends of writeback are used when there are some
    assert stable_pages._writes_with_waits(w).any() == (writes and completions)  # open loop when writers waited
    assert (len(resume_draws(w, 1)[1]) > 0) == (writes and completions)  # waits that end with a drawn resume
    assert np.array_equal(got, plain_waits(w, write_of))
