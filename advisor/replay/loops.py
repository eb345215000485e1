"""The replay's inner loops, in Rust (parsers/src/replay/): one call per policy over
every page dirtying or fsync of the capture. These wrappers hand them contiguous
arrays of the dtypes they read and allocate what they fill. A cast that could change
a value (float timestamps to int64) is refused with a TypeError, never done silently."""

from __future__ import annotations

import numpy as np

from advisor import _parsers


def _as(a: np.ndarray, dtype: type) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a).astype(dtype, casting="same_kind", copy=False))


def _i64(a: np.ndarray) -> np.ndarray:
    return _as(a, np.int64)


def _f64(a: np.ndarray) -> np.ndarray:
    return _as(a, np.float64)


def sweep_ranks(n_pages: int, start_rank: np.ndarray, ev_ts: np.ndarray, ev_rank: np.ndarray, first: int, t0: int,
                page_ns: float, tagged: bool) -> tuple[float, int, int, int]:
    """One writeback pass over page ranks: (end, written, late, consumed); see
    advisor.replay.pages.sweep."""
    return _parsers.sweep_ranks(int(n_pages), _i64(start_rank), _i64(ev_ts), _i64(ev_rank), int(first), int(t0), float(page_ns),
                                bool(tagged))


def page_waits(ev_ts, ev_inode, ev_page, ev_writer, closed_loop, sub_ts, sub_inode, sub_writer, sub_deadline, sub_done, service_ns,
               transfer_ns, serial, n_pages, n_inodes, n_writers, pages_per_request, sub_first_done, resume_ns) -> np.ndarray:
    """Each page dirtying's wait for its page's writeback; see
    advisor.problems.stable_page_wait.model._predicted_waits."""
    out = np.zeros(len(ev_ts))
    _parsers.page_waits(out, _f64(ev_ts), _i64(ev_inode), _i64(ev_page), _i64(ev_writer), _f64(resume_ns), _i64(sub_ts),
                        _i64(sub_inode), _i64(sub_writer), _i64(sub_deadline), _i64(sub_done), _i64(sub_first_done),
                        _f64(service_ns), _f64(transfer_ns), bool(closed_loop), bool(serial), int(n_pages), int(n_inodes),
                        int(n_writers), int(pages_per_request))
    return out


def shared_log(pid, start, think_ns, paced, data_ns, per_extent, inode_slot, txn_ns, commit_ns, batch_ticks, prep, wake,
               tick) -> tuple[np.ndarray, np.ndarray, int]:
    """The fsyncs through btrfs's shared log on one clock: (cost, busy, commits); see
    advisor.problems.btrfs_full_fsync_fallback.model._simulate."""
    cost, busy = np.zeros(len(pid)), np.zeros(len(pid))
    # per_extent may be int64 (a whole number of ns per lookup): its products with the
    # extent counts are exact either way, so float64 gives the same sums.
    commits = _parsers.shared_log(cost, busy, _i64(pid), _i64(start), _f64(think_ns), _as(paced, np.bool_).view(np.uint8),
                                  _f64(data_ns), _f64(per_extent), _i64(inode_slot), _f64(prep), _f64(commit_ns),
                                  _i64(batch_ticks), _f64(wake), float(txn_ns), int(tick))
    return cost, busy, commits
