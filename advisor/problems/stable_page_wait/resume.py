"""How long a write takes to go on once the page it waited for has left writeback.

folio_end_writeback wakes the writer sleeping in folio_wait_writeback, but the writer
runs only when the scheduler picks it, and ->write_begin may wait again (the journal)
before ->write_end dirties the page. On stable-pages-ext4, 16 of the 21 writes that
stalled over 3 ms took 3.38-3.43 ms although their page's IO ended 0.09-0.38 ms into
them: fio waited for page 0 of its file, the request holding it completed 0.135 ms later
(in ksoftirqd, as did the inode's leaving writeback), and fio dirtied the page 3.268 ms
after that. The replay draws this delay for every wait it predicts from the capture's
own waits."""

from __future__ import annotations

import numpy as np

from advisor.replay.device import permuted_quantiles
from advisor.replay.workload import Workload

_NEVER = np.iinfo(np.int64).max


def _next_after(sorted_ts: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each of t: the first of sorted_ts after it (_NEVER: none)."""
    if not len(sorted_ts):
        return np.full(len(t), _NEVER, np.int64)
    k = np.searchsorted(sorted_ts, t, side="right")
    return np.where(k < len(sorted_ts), sorted_ts[np.minimum(k, len(sorted_ts) - 1)], _NEVER)


def _releases(w: Workload) -> tuple[np.ndarray, str]:
    """When pages may have left writeback, sorted, and what says so: the data requests'
    completions, else (a capture without block events) the inodes' leaving writeback,
    which happens as the inode's last page under writeback completes."""
    if len(w.write_done_ts):
        return w.write_done_ts, "the last data request completed"
    return np.sort(w.inode_completed_ts), "the last inode leaving writeback (sb_clear_inode_writeback, no block requests recorded)"


def resume_samples(w: Workload) -> np.ndarray:
    """The capture's delays, in ns: for each wait on page writeback inside a write
    syscall after which the task's next event is a dirtying inside the same write (not
    another wait, not a balance_dirty_pages sleep), the time from the last release
    (_releases) before that dirtying (or the wait, if later) to the dirtying. A lower
    bound of the true delay: the page may have left writeback with an earlier request.
    None without any release: the whole wait would be taken for the delay."""
    released_at, _ = _releases(w)
    if not len(released_at):
        return np.zeros(0)
    writes = w.op("write")
    found = []
    for pid in np.intersect1d(np.unique(w.page_wait_pid), np.unique(writes.pid)):
        waits = np.sort(w.page_wait_ts[w.page_wait_pid == pid])
        mine = np.flatnonzero((writes.pid == pid) & writes.complete)
        mine = mine[np.argsort(writes.start[mine], kind="stable")]
        if not len(mine):
            continue
        k = np.searchsorted(writes.start[mine], waits, side="right") - 1
        end = writes.end[mine][np.maximum(k, 0)]
        dirtied = _next_after(np.sort(w.dirty_ts[w.dirty_pid == pid]), waits)
        ok = (k >= 0) & (waits <= end) & (dirtied <= end) & (dirtied < _next_after(waits, waits))
        ok &= dirtied < _next_after(np.sort(w.throttle_ts[w.throttle_pid == pid]), waits)
        last = np.searchsorted(released_at, dirtied, side="right") - 1
        released = np.maximum(waits, np.where(last >= 0, released_at[np.maximum(last, 0)], waits))
        found.append((dirtied - released)[ok])
    return np.concatenate(found).astype(np.float64) if found else np.zeros(0)


def resume_draws(w: Workload, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n drawn delays (zeros when the capture shows none) and the samples they come from."""
    samples = resume_samples(w)
    if not len(samples) or not n:
        return np.zeros(n), samples
    return permuted_quantiles(samples, n, 6).astype(np.float64), samples


def _why_no_delay(w: Workload) -> str:
    """Which of resume_samples' inputs the capture lacks, or that it had them all and
    still showed no write dirtying its page after a wait."""
    if not len(_releases(w)[0]):
        return "the capture shows nothing of when pages left writeback: neither block requests nor sb_clear_inode_writeback"
    if w.page_waits is None:
        return "the capture has no waits on page writeback (writeback:folio_wait_writeback not recorded)"
    if not len(w.op("write")):
        return "the capture has no write calls to find such waits in"
    return "the capture shows no write dirtying its page after a wait on page writeback"


def say_resume(w: Workload, samples: np.ndarray) -> None:
    """The replay's assumption about the delay."""
    if len(samples):
        text = (f"stable pages: a writer goes on a delay after its page leaves writeback, drawn from the capture's {len(samples):,} "
                f"waits inside writes (from {_releases(w)[1]} before the write dirtied that page to the dirtying: "
                f"p50 {np.median(samples) / 1e3:,.0f} us, p99 {np.percentile(samples, 99) / 1e6:,.2f} ms; the scheduler's wake-up "
                "and anything else ->write_begin waited for)")
    else:
        text = f"stable pages: a writer goes on as soon as its page leaves writeback ({_why_no_delay(w)}, so the wake-up's delay is not measured)"
    if text not in w.assumptions:
        w.assumptions.append(text)
