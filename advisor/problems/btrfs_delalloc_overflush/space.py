"""btrfs metadata reservation sizes (v5.10 ctree.h, delalloc-space.c, inode.c) and the
feed of a writer that reads its data from a decompressor: what a synthetic workload and
the reservation loop (closed_loop.py) share."""

from __future__ import annotations

import numpy as np

from advisor.replay.workload import MetadataReservations

MAX_LEVEL = 8  # BTRFS_MAX_LEVEL
CREATE_ITEMS = 5  # btrfs_create: inode item and ref, two dir items, one xattr
EXTENT_SIZE_PER_ITEM = 256 * 1024  # shrink_delalloc: to_reclaim = items * EXTENT_SIZE_PER_ITEM
MAX_EXTENT_BYTES = 128 << 20  # BTRFS_MAX_EXTENT_SIZE, count_max_extents
PAGE = 4096
LEAF_HEADER, ITEM_HEADER, CSUM_BYTES = 101, 25, 4  # btrfs_header, btrfs_item, crc32c


def insert_size(nodesize: int, items: float) -> float:
    return float(nodesize) * MAX_LEVEL * 2 * items


def delalloc_reservation(nodesize: int, nbytes: np.ndarray) -> np.ndarray:
    """The inode block_rsv a file's delalloc keeps (btrfs_calculate_inode_block_rsv_size)."""
    csums_per_leaf = (nodesize - LEAF_HEADER - ITEM_HEADER) // CSUM_BYTES
    sectors = np.ceil(nbytes / PAGE)
    leaves = np.ceil(sectors / csums_per_leaf)
    extents = np.maximum(1, np.ceil(nbytes / MAX_EXTENT_BYTES))
    return insert_size(nodesize, extents + leaves) + float(nodesize) * MAX_LEVEL


class Feed:
    """The writer's input: a decompressor producing at `rate` bytes/s, at most `buffer`
    bytes ahead of what the writer has taken (it blocks on the full pipe)."""

    def __init__(self, rate: float, buffer: float):
        self.per_byte, self.buffer = 1e9 / rate, buffer
        self.produced = self.consumed = self.at = 0.0

    def take(self, t: float, nbytes: float) -> float:
        """When the writer, ready at t, has all of the next nbytes."""
        self.produced = min(self.produced + (t - self.at) / self.per_byte, self.consumed + self.buffer)
        self.at = t
        if self.produced < self.consumed + nbytes:
            t += (self.consumed + nbytes - self.produced) * self.per_byte
            self.produced, self.at = self.consumed + nbytes, t
        self.consumed += nbytes
        return t


def unhindered_write_ends(r: MetadataReservations) -> np.ndarray:
    """When each file's write ends if no reservation ever waits (ns)."""
    feed = Feed(r.source_rate, r.source_buffer)
    per_byte = 1e9 / r.write_rate
    t, ends = 0.0, []
    for size in r.file_bytes.tolist():
        t = feed.take(t, size) + r.file_cpu_ns + size * per_byte
        ends.append(t)
    return np.array(ends)
