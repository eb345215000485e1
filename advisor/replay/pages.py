"""Page-cache state reconstructed from the dirtying stream: which pages were dirty at a
moment, and the writeback sweep over them (in Rust: tens of millions of events)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.replay.distinct import distinct
from advisor.replay.loops import sweep_ranks
from advisor.replay.workload import Workload


def dirty_at(w: Workload, t: int, clean_by: int | None = None,
             written: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Sorted page keys dirty at time t: dirtied at or before t, and not written back
    since their last dirtying by a page-level writeback event (btrfs extent_writepage)
    or an inode-level one (writeback_single_inode, sb_clear_inode_writeback) at or
    before `clean_by` (default t: every writeback up to t counts), or by the replay's own
    page writebacks `written` (keys, times), and not dropped since by their inode's
    eviction (a deleted file). Pages dirtied before the capture began are unknown and not
    counted.

    An inode whose pages the capture shows written one by one is cleaned by those events,
    and at inode level only by a pass that left no page dirty: the flusher writes a big
    file a chunk at a time. A btrfs file dirtied at 8 MB/s: writeback_single_inode wrote
    13,325 pages and left I_DIRTY_PAGES set, and sb_clear_inode_writeback followed when
    those were on disk, with 17,366 pages still dirty (a snapshot 1.5 s later wrote them)."""
    clean_by = t if clean_by is None else min(t, clean_by)
    h = _history(w)
    last = _last_by(h, t)
    keys, ts = h.keys[last], h.ts[last]
    if not len(keys):
        return keys
    clean_after = np.full(len(keys), -1, dtype=np.int64)
    wsel = w.page_wb_ts <= clean_by
    if wsel.any():
        clean_after = np.maximum(clean_after, _last_per_key(keys, w.page_wb_key[wsel], w.page_wb_ts[wsel]))
    isel = (w.inode_wb_ts <= clean_by) & _cleans_inode(w)
    if isel.any():
        clean_after = np.maximum(clean_after, _last_per_key(keys >> 32, w.inode_wb_ino[isel], w.inode_wb_ts[isel]))
    if written is not None and len(written[0]):
        clean_after = np.maximum(clean_after, _last_per_key(keys, written[0], written[1]))
    esel = w.inode_evicted_ts <= t  # evicted: its pages dropped, whatever clean_by says
    if esel.any():
        clean_after = np.maximum(clean_after, _last_per_key(keys >> 32, w.inode_evicted_ino[esel], w.inode_evicted_ts[esel]))
    return keys[ts > clean_after]


def _cleans_inode(w: Workload) -> np.ndarray:
    """Per inode-level writeback event, whether it cleans every page of its inode: a pass
    that left none dirty, or any event of an inode whose pages the capture does not show
    written one by one. Computed once per workload (dirty_at runs once per flush step)."""
    sources = (w.inode_wb_ino, w.inode_wb_all_written, w.page_wb_key)
    cached = getattr(w, "_inode_cleans", None)
    if cached is None or any(a is not b for a, b in zip(cached[0], sources)):
        page_level = np.isin(w.inode_wb_ino, np.unique(w.page_wb_key >> 32)) if len(w.page_wb_key) else np.zeros(len(w.inode_wb_ino), bool)
        cached = (sources, w.inode_wb_all_written | ~page_level)
        w._inode_cleans = cached  # not a dataclass field: a cache that summary() and equality ignore
    return cached[1]


def key_bytes(w: Workload, keys: np.ndarray, t: int) -> np.ndarray:
    """Bytes of each page key's folio (keys sorted, each dirtied at or before t), as its
    last dirtying by t left it: folio_bytes each unless the workload knows each folio's
    size (Workload.dirty_pages)."""
    if w.dirty_pages is None or not len(keys):
        return np.full(len(keys), float(w.folio_bytes))
    h = _history(w)
    last = _last_by(h, t)
    known, pages = h.keys[last], w.dirty_pages[h.order][last]
    if not len(known):
        return np.full(len(keys), float(w.folio_bytes))
    pos = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    return np.where(known[pos] == keys, pages[pos] * w.page_size, float(w.folio_bytes))


def dirty_inodes_at(w: Workload, t: int) -> np.ndarray:
    """Sorted inodes on the writeback lists at time t: dirtied (a page, or only the
    metadata: Workload.inode_enqueued_*) at or before t and not
    visited by an inode-level writeback (writeback_single_inode) nor evicted since. Writing the pages
    elsewhere (fsync, btrfs's space reclaim through filemap_fdatawrite) leaves the inode
    on b_dirty until the flusher or a sync visits it: __writeback_single_inode clears
    I_DIRTY_PAGES only then. So the end of such a writeback (sb_clear_inode_writeback) is
    no visit: on ext4, 20 files written and fsynced were all written again by the sync
    that followed (writeback_single_inode for each). Only a capture without
    writeback_single_inode takes the ends of writeback as the visits."""
    dirty_ino, dirty_ts = _inode_dirtying(w)
    inodes = distinct(dirty_ino[dirty_ts <= t])
    if not len(inodes):
        return inodes
    last_dirty = _last_dirtied(w, inodes, t)
    visit_ts, visit_ino = (w.inode_written_ts, w.inode_written_ino) if len(w.inode_written_ts) else (w.inode_wb_ts, w.inode_wb_ino)
    isel = visit_ts <= t
    last_visit = _last_per_key(inodes, visit_ino[isel], visit_ts[isel]) if isel.any() else np.full(len(inodes), -1)
    return inodes[(last_dirty > last_visit) & (last_dirty > last_eviction(w, inodes, t))]


def not_evicted(w: Workload, inodes: np.ndarray, t: int) -> np.ndarray:
    """Of `inodes` (sorted), those whose last dirtying at or before t came after their
    last eviction: a deleted file's inode leaves the writeback lists (evict →
    inode_io_list_del), and a later file may reuse its number."""
    return inodes[_last_dirtied(w, inodes, t) > last_eviction(w, inodes, t)]


def inodes_dirtied(w: Workload, t0: int, t1: int) -> np.ndarray:
    """Sorted inodes dirtied in (t0, t1]: a page of theirs, or only their metadata."""
    dirty_ino, dirty_ts = _inode_dirtying(w)
    return distinct(dirty_ino[(dirty_ts > t0) & (dirty_ts <= t1)])


def _last_dirtied(w: Workload, inodes: np.ndarray, t: int) -> np.ndarray:
    """Per inode (sorted), its last dirtying (a page, or only the metadata) at or before t, else -1."""
    dirty_ino, dirty_ts = _inode_dirtying(w)
    sel = dirty_ts <= t
    return _last_per_key(inodes, dirty_ino[sel], dirty_ts[sel]) if sel.any() else np.full(len(inodes), -1)


def _inode_dirtying(w: Workload) -> tuple[np.ndarray, np.ndarray]:
    """(inode, time) of every dirtying of an inode: its pages' and its metadata's alone
    (Workload.inode_enqueued_*)."""
    if not len(w.inode_enqueued_ts):
        return w.dirty_ino, w.dirty_ts
    return np.concatenate((w.dirty_ino, w.inode_enqueued_ino)), np.concatenate((w.dirty_ts, w.inode_enqueued_ts))


def last_eviction(w: Workload, inodes: np.ndarray, t: int) -> np.ndarray:
    """Per inode, its last eviction at or before t, else -1."""
    sel = w.inode_evicted_ts <= t
    return _last_per_key(inodes, w.inode_evicted_ino[sel], w.inode_evicted_ts[sel]) if sel.any() else np.full(len(inodes), -1)


def page_ranks(w: Workload) -> tuple[np.ndarray, np.ndarray]:
    """The distinct page keys the workload dirties (sorted), and for each dirtying event
    the index of its page among them: a dense page number for flag and time arrays."""
    h = _history(w)
    return h.pages, h.page_of_event


@dataclass(frozen=True)
class _DirtyHistory:
    """The dirtying stream sorted by page key, then time: sorted once per workload, so
    each dirty_at is one linear pass instead of a sort of every event up to t."""

    sources: tuple[np.ndarray, ...]  # the workload arrays it was built from
    order: np.ndarray  # workload order → this order
    keys: np.ndarray
    ts: np.ndarray
    same_page_next: np.ndarray  # keys[i + 1] == keys[i], for i < len - 1
    pages: np.ndarray  # distinct keys, sorted
    page_of_event: np.ndarray  # per dirtying event (workload order): its index in pages


def _history(w: Workload) -> _DirtyHistory:
    sources = (w.dirty_ts, w.dirty_ino, w.dirty_idx)
    h = getattr(w, "_dirty_history", None)
    if h is None or any(a is not b for a, b in zip(h.sources, sources)):
        keys = w.dirty_key
        order = np.lexsort((w.dirty_ts, keys))
        keys, ts = keys[order], w.dirty_ts[order]
        same_page_next = keys[1:] == keys[:-1]
        new_page = np.concatenate(([True], ~same_page_next)) if len(keys) else np.zeros(0, dtype=bool)
        page_of_event = np.empty(len(keys), dtype=np.int64)
        page_of_event[order] = np.cumsum(new_page, dtype=np.int64) - 1
        h = _DirtyHistory(sources, order, keys, ts, same_page_next, keys[new_page], page_of_event)
        w._dirty_history = h  # not a dataclass field: a cache that summary() and equality ignore
    return h


def _last_by(h: _DirtyHistory, t: int) -> np.ndarray:
    """Mask over the history: each page's last dirtying at or before t. Within a page's
    run the times ascend, so the events at or before t are a prefix of the run and the
    last dirtying by t is that prefix's last element."""
    sel = h.ts <= t
    last = sel.copy()
    last[:-1] &= ~(h.same_page_next & sel[1:])
    return last


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


def sweep(pages, start_keys, ev_ts, ev_page, t0, page_ns, tagged):
    """One writeback pass over the page index space, as write_cache_pages /
    extent_write_cache_pages do for a whole-file range (range_cyclic = 0).

    The pass starts at t0 with `start_keys` dirty (sorted, distinct, among `pages`, the
    sorted keys of page_ranks) and writes the next dirty page after its cursor, one page
    per `page_ns` of device time. Untagged, it looks the pages up by PAGECACHE_TAG_DIRTY
    as it goes, so a page dirtied *ahead of the cursor* while the pass runs is written too
    (`ev_ts`, `ev_page`: dirtying after t0 in time order, as indices into `pages`).
    Tagged, tag_pages_for_writeback() marked the start set TOWRITE first and the pass
    writes only those. Returns (end time of the last write, pages written, pages written
    that were dirtied after t0, index of the first dirtying event not consumed).
    """
    start_rank = np.searchsorted(pages, start_keys)
    first = int(np.searchsorted(pages, -1, side="right"))  # the cursor starts at key -1: no negative key is written
    # The pass over page ranks (parsers/src/replay/page_sweep.rs): the next page to write
    # is the next flagged rank after the cursor, one forward scan.
    return sweep_ranks(len(pages), start_rank, ev_ts, ev_page, first, t0, page_ns, tagged)
