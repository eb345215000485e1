"""How many pages each dirtying event stands for, when the page cache uses large folios.

writeback_dirty_folio fires once per folio, at the folio's first page index, and does not
say how large the folio is. A folio of k pages (k a power of two) starts at an index that
is a multiple of k, so a file written in order shows its folios one after another, each
starting where the previous one ended. dbench writing a 1 MiB file on ext4 (6.18) with
writes of 4, 8, 16, 32 and then 64 KiB dirties, in this order:

    writeback_dirty_folio: bdi 7:0: ino=131185 index=0
    writeback_dirty_folio: bdi 7:0: ino=131185 index=8
    writeback_dirty_folio: bdi 7:0: ino=131185 index=12
    writeback_dirty_folio: bdi 7:0: ino=131185 index=14
    writeback_dirty_folio: bdi 7:0: ino=131185 index=16
    writeback_dirty_folio: bdi 7:0: ino=131185 index=32   ... 48, 64, ... 240

folios of 8, 4, 2, 2 and then 16 pages: 256 pages in 20 events, and the sync that wrote
the file counted 256 pages (ext4_writepages_result pages_written=256). So a dirtying
whose inode's next dirtying starts k pages further, k a power of two dividing its index,
is taken as a folio of k pages; the last folio of such a run as large as the one before
it, when its index allows. Any other dirtying (random writes, a run's first folio on its
own) stands for the capture's mean, which the caller measures from the data writes.
"""

from __future__ import annotations

import numpy as np

# The largest folio the page cache makes: MAX_PAGECACHE_ORDER is 9 on x86-64 with 4 KiB
# pages (a PMD, 2 MiB).
MAX_FOLIO_PAGES = 512


def pages_per_dirtying(dirty_ts, dirty_ino, dirty_idx, default_pages: float) -> tuple[np.ndarray, int]:
    """Per dirtying event, the pages its folio holds, and how many of them were read from
    their neighbours (the others are `default_pages`)."""
    n = len(dirty_ts)
    out = np.full(n, float(default_pages))
    if n < 2:
        return out, 0
    order = np.lexsort((dirty_ts, dirty_ino))  # each inode's dirtyings in time order
    ino, idx = dirty_ino[order], dirty_idx[order]
    step = idx[1:] - idx[:-1]
    run = ((ino[1:] == ino[:-1]) & (idx[:-1] >= 0) & (step > 0) & (step <= MAX_FOLIO_PAGES)
           & ((step & (step - 1)) == 0) & (idx[:-1] % np.maximum(step, 1) == 0))
    size = np.zeros(n, np.int64)
    size[:-1][run] = step[run]
    # The last folio of a run: the size of the one before it, if its index is aligned to it.
    before = np.concatenate(([0], np.where(run, step, 0)))
    last = (size == 0) & (before > 0) & (idx % np.maximum(before, 1) == 0)
    size[last] = before[last]
    known = size > 0
    out[order[known]] = size[known]
    return out, int(known.sum())
