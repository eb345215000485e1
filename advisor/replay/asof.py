"""As-of joins by inode in numpy: for each query (inode, time), the last row of the same
inode at or before that time (DuckDB's ASOF JOIN ... ON a.ino = b.ino AND b.ts <= a.ts,
without a round trip through SQL for arrays the replay already holds)."""

from __future__ import annotations

import numpy as np


def last_at_or_before(data_ino, data_ts, q_ino, q_ts) -> np.ndarray:
    """Per query, the index of the last data row of the same inode at or before its time, else -1."""
    n = len(data_ts)
    ino = np.concatenate((data_ino, q_ino))
    ts = np.concatenate((data_ts, q_ts))
    is_query = np.concatenate((np.zeros(n, bool), np.ones(len(q_ts), bool)))
    order = np.lexsort((is_query, ts, ino))  # a data row at the query's time comes first
    # The last data row so far in this order (its position, which only grows), as a row index.
    pos = np.maximum.accumulate(np.where(is_query[order], -1, np.arange(len(order))))
    last = np.where(pos >= 0, order[np.maximum(pos, 0)], -1)
    last_ino = np.where(last >= 0, ino[np.maximum(last, 0)], -1)
    found = np.where((last >= 0) & (last_ino == ino[order]), last, -1)
    out = np.empty(len(q_ts), np.int64)
    q = is_query[order]
    out[order[q] - n] = found[q]
    return out


def time_at_or_before(data_ino, data_ts, q_ino, q_ts) -> np.ndarray:
    """Per query, the time of the last data row of the same inode at or before it, else -1."""
    i = last_at_or_before(data_ino, data_ts, q_ino, q_ts)
    return np.where(i >= 0, data_ts[np.maximum(i, 0)] if len(data_ts) else -1, -1)


def first_at_or_after(data_ino, data_ts, q_ino, q_ts) -> np.ndarray:
    """Per query, the index of the first data row of the same inode at or after its time, else -1."""
    return last_at_or_before(data_ino, -np.asarray(data_ts), q_ino, -np.asarray(q_ts))
