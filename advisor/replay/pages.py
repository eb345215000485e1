"""Page-cache state reconstructed from the dirtying stream: which pages were dirty at a
moment, and the writeback sweep over them (numba-compiled, tens of millions of events)."""

from __future__ import annotations

import heapq

import numba
import numpy as np

from advisor.replay.workload import Workload


def dirty_at(w: Workload, t: int) -> np.ndarray:
    """Sorted page keys dirty at time t: dirtied at or before t, and not written back
    since their last dirtying by a page-level writeback event (btrfs extent_writepage)
    or an inode-level one (writeback_single_inode, sb_clear_inode_writeback).
    Pages dirtied before the capture began are unknown and not counted."""
    sel = w.dirty_ts <= t
    keys, ts = w.dirty_key[sel], w.dirty_ts[sel]
    if not len(keys):
        return keys
    order = np.lexsort((ts, keys))
    keys, ts = keys[order], ts[order]
    last = np.concatenate((keys[1:] != keys[:-1], [True]))
    keys, ts = keys[last], ts[last]
    clean_after = np.full(len(keys), -1, dtype=np.int64)
    wsel = w.page_wb_ts <= t
    if wsel.any():
        clean_after = np.maximum(clean_after, _last_per_key(keys, w.page_wb_key[wsel], w.page_wb_ts[wsel]))
    isel = w.inode_wb_ts <= t
    if isel.any():
        clean_after = np.maximum(clean_after, _last_per_key(keys >> 32, w.inode_wb_ino[isel], w.inode_wb_ts[isel]))
    return keys[ts > clean_after]


def _last_per_key(query: np.ndarray, keys: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """For each query key, the latest ts among (keys, ts) rows with that key, else -1."""
    order = np.lexsort((ts, keys))
    keys, ts = keys[order], ts[order]
    last = np.concatenate((keys[1:] != keys[:-1], [True]))
    keys, ts = keys[last], ts[last]
    pos = np.searchsorted(keys, query)
    pos_c = np.minimum(pos, len(keys) - 1)
    hit = (pos < len(keys)) & (keys[pos_c] == query)
    return np.where(hit, ts[pos_c], -1)


@numba.njit(cache=True)
def sweep(start_keys, ev_ts, ev_key, t0, page_ns, tagged):
    """One writeback pass over the page index space, as write_cache_pages /
    extent_write_cache_pages do for a whole-file range (range_cyclic = 0).

    The pass starts at t0 with `start_keys` dirty (sorted) and writes the next dirty page
    at or after its cursor, one page per `page_ns` of device time. Untagged, it looks the
    pages up by PAGECACHE_TAG_DIRTY as it goes, so a page dirtied *ahead of the cursor*
    while the pass runs is written too (`ev_ts`, `ev_key`: dirtying after t0, in time
    order). Tagged, tag_pages_for_writeback() marked the start set TOWRITE first and the
    pass writes only those. Returns (end time of the last write, pages written, pages
    written that were dirtied after t0, index of the first dirtying event not consumed).
    """
    heap = [np.int64(0)] * 0
    for k in start_keys:
        heap.append(k * 2)  # low bit 0: dirty at t0; popped before a later duplicate
    heapq.heapify(heap)
    cursor = np.int64(-1)
    t = np.float64(t0)
    written = 0
    late = 0
    i = 0
    n = len(ev_ts)
    while i < n and ev_ts[i] <= t0:
        i += 1
    while len(heap) > 0:
        item = heapq.heappop(heap)
        key = item >> 1
        if key <= cursor:
            continue  # already written in this pass
        cursor = key
        t += page_ns
        written += 1
        late += item & 1
        if not tagged:
            while i < n and ev_ts[i] <= t:
                if ev_key[i] > cursor:
                    heapq.heappush(heap, ev_key[i] * 2 + 1)
                i += 1
    return t, written, late, i
