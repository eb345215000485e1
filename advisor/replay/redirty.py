"""Writebacks that wrote nothing: a task puts an inode under writeback and takes it off
again itself, having re-dirtied the pages it could not write.

writeback_dirty_folio fires only as a folio goes from clean to dirty, so a folio dirtied
twice with no writeback of its inode seen between was cleaned unseen: by a writeback's
folio_clear_dirty_for_io. On ext4 in data=ordered mode the journal commit writes the data
of the inodes in its transaction without allocating blocks (ext4_writepages with
can_map = 0); a delayed-allocation folio it cannot write is re-dirtied, put under
writeback and taken off at once, in jbd2's own context, one folio after another:

    jbd2/loop0-8-28025 [000] 43525.819733: writeback_dirty_folio: bdi 7:0: ino=131305 index=15
    jbd2/loop0-8-28025 [000] 43525.819734: sb_mark_inode_writeback: dev 7,0 ino 131305 ...
    jbd2/loop0-8-28025 [000] 43525.819734: sb_clear_inode_writeback: dev 7,0 ino 131305 ...

The folios stay dirty: such an episode cleans nothing, and the re-dirtying is no new
dirty data. Under dbench, 903 of 1,580 episodes were of this kind (mark to clear: median
0.24 us; nine in ten of those cleared by another task took 112 us or more). A device
that completes IO in the submitting task (brd, pmem) also clears in the marking task,
but its writeback re-dirties nothing, so an episode counts as empty only when the
marking task re-dirtied a page of the inode just before it.
"""

from __future__ import annotations

import numpy as np

from advisor.replay.asof import last_at_or_before, time_at_or_before

MARKED, COMPLETED, WRITTEN = 0, 1, 2


def empty_writebacks(wb_ts, wb_ino, wb_pid, wb_kind, dirty_ts, dirty_ino, dirty_key, dirty_pid) -> tuple[np.ndarray, np.ndarray]:
    """Masks (over the inode writeback events, over the dirtying events) of the episodes
    that wrote nothing (their mark and clear) and of the re-dirtyings before them.
    `dirty_key`: each dirtying's page (workload.page_key)."""
    drop_wb = np.zeros(len(wb_ts), bool)
    drop_dirty = np.zeros(len(dirty_ts), bool)
    if not len(wb_ts) or not len(dirty_ts):
        return drop_wb, drop_dirty
    order = np.lexsort((wb_ts, wb_ino))
    o_ino, o_ts, o_pid, o_kind = wb_ino[order], wb_ts[order], wb_pid[order], wb_kind[order]
    # A mark whose inode's next writeback event is a clear by the same task.
    pair = (o_kind[:-1] == MARKED) & (o_kind[1:] == COMPLETED) & (o_ino[1:] == o_ino[:-1]) & (o_pid[1:] == o_pid[:-1])
    marks = np.flatnonzero(pair)
    if not len(marks):
        return drop_wb, drop_dirty
    # Re-dirtyings: a folio dirtied again with no writeback of its inode between, other
    # than the candidate episodes themselves (each folio gets one, one after another).
    candidate_clear = np.zeros(len(o_ts), bool)
    candidate_clear[marks + 1] = True
    cleans = (o_kind != MARKED) & ~candidate_clear
    by_page = np.lexsort((dirty_ts, dirty_key))
    prev = np.full(len(dirty_ts), -1, np.int64)
    same = dirty_key[by_page][1:] == dirty_key[by_page][:-1]
    prev[by_page[1:][same]] = dirty_ts[by_page[:-1][same]]
    last_clean = time_at_or_before(o_ino[cleans], o_ts[cleans], dirty_ino, dirty_ts)
    redirty = (prev >= 0) & (prev > last_clean)
    # The episode is empty when the inode's last dirtying before its mark is a re-dirtying
    # by the marking task, after the inode's previous writeback event.
    d = last_at_or_before(dirty_ino, dirty_ts, o_ino[marks], o_ts[marks])
    before = np.where((marks > 0) & (o_ino[np.maximum(marks - 1, 0)] == o_ino[marks]), o_ts[np.maximum(marks - 1, 0)], -1)
    ok = d >= 0
    dd = np.maximum(d, 0)
    ok &= redirty[dd] & (dirty_pid[dd] == o_pid[marks]) & (dirty_ts[dd] > before)
    empty = np.zeros(len(o_ts), bool)
    empty[marks[ok]] = True
    drop_wb[order[marks[ok]]] = True
    drop_wb[order[marks[ok] + 1]] = True
    # Every re-dirtying by the marking task since the inode's previous writeback event:
    # those whose inode's next writeback event is an empty episode's mark by that task.
    at = last_at_or_before(o_ino, o_ts, dirty_ino, dirty_ts)
    nxt = np.where(at >= 0, at + 1, np.searchsorted(o_ino, dirty_ino, side="left"))
    nc = np.minimum(nxt, len(o_ts) - 1)
    drop_dirty = redirty & (nxt < len(o_ts)) & (o_ino[nc] == dirty_ino) & empty[nc] & (o_pid[nc] == dirty_pid)
    return drop_wb, drop_dirty
