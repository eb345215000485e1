"""The closed btrfs metadata-reservation loop (5.10) behind btrfs-delalloc-overflush:
the writer waits on a ticket, a delalloc flush releases space, the flush decides when
the writer's next reservation succeeds, and so when the next flush is asked for.

Kernel code this stands for (v5.10 fs/btrfs):
- ctree.h: btrfs_calc_insert_metadata_size(n) = nodesize * BTRFS_MAX_LEVEL (8) * 2 * n,
  btrfs_calc_metadata_size(n) = nodesize * 8 * n: 256 KiB and 128 KiB per item at the
  default 16 KiB nodes.
- inode.c btrfs_create: btrfs_start_transaction(root, 5), a 1.25 MiB reservation while
  the file is created. delalloc-space.c: a buffered write's inode block_rsv is sized
  insert(outstanding extents + csum leaves) + metadata(1) (640 KiB for a small file) and
  stays reserved until the file's ordered extent completes (or the inline extent is
  written), then btrfs_try_granting_tickets wakes waiting tickets.
- space-info.c __reserve_metadata_bytes: no room → a ticket (BTRFS_RESERVE_FLUSH_ALL),
  the task sleeps; btrfs_async_reclaim_metadata_space calls flush_space(to_reclaim = the
  tickets' bytes, state), restarting from the first state after every granted ticket.
- shrink_delalloc: items = to_reclaim / insert(1) * 2; up to 3 loops of
  btrfs_start_delalloc_roots, each followed (FLUSH_DELALLOC) by
  schedule_timeout_killable(1), a sleep to the next tick, or (FLUSH_DELALLOC_WAIT, after
  a call that granted nothing) by btrfs_wait_ordered_roots; a loop ends early when no
  ticket waits.
- 5.10 (38d715f494f2): btrfs_start_delalloc_roots(fs_info, items) and start_delalloc_inodes
  counts `nr` in inodes: `items` whole inodes are flushed (filemap_flush per inode).
  e076ab2a2ca7: nr = min(delalloc bytes, items * 256 KiB) >> PAGE_SHIFT pages, written by
  sync_inode(inode, wbc) inode after inode until wbc.nr_to_write is spent.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from advisor.problems.btrfs_delalloc_overflush.space import CREATE_ITEMS, EXTENT_SIZE_PER_ITEM, PAGE, Feed, delalloc_reservation, insert_size
from advisor.replay.device import Device
from advisor.replay.workload import MetadataReservations

LOOPS_PER_CALL = 3  # shrink_delalloc: loops < 3
DIRTY_EXPIRE_NS = 30e9  # vm.dirty_expire_centisecs
WRITEBACK_INTERVAL_NS = 5e9  # vm.dirty_writeback_centisecs


class ReservationStuck(Exception):
    """Nothing left to flush and nothing in flight, yet the ticket cannot be granted."""


class ReservationLoop:
    """One writer (tar) creating files in order; one async reclaim worker; the device."""

    def __init__(self, r: MetadataReservations, device: Device, inode_cpu_ns: float, flush_pages: bool):
        self.r, self.dev, self.inode_cpu, self.flush_pages = r, device, float(inode_cpu_ns), flush_pages
        # Python lists: the loop touches one file at a time, where numpy scalars are slow.
        sizes = r.file_bytes.astype(np.float64)
        self.size = sizes.tolist()
        self.rsv = delalloc_reservation(r.nodesize, sizes).tolist()
        self.left = list(self.size)  # bytes of each file still delalloc
        self.dirtied = [0.0] * len(self.size)
        self.byte_ns = 1e9 / device.bandwidth
        self.min_service = device.latency_ns / max(1.0, device.queue_depth)
        self.latency = float(device.latency_ns)
        self.jiffy = 1e9 / r.hz
        self.free = float(r.metadata_free)
        self.head = self.tail = 0  # the delalloc list: files head..tail-1, oldest first
        self.delalloc = 0.0
        self.releases: list[tuple[float, float]] = []  # (when, bytes) ordered extents complete
        self.device_free = 0.0
        self.wake = -math.inf  # when the reclaim worker's sleep ends
        self.loops, self.wait_ordered, self.granted_in_call, self.to_reclaim = 0, False, False, 0.0
        self.next_kupdate = WRITEBACK_INTERVAL_NS
        self.calls = self.requested = self.flushed = self.reclaim_inodes = self.waits = 0
        self.waited_ns = 0.0

    # -- the device and the release of reservations -------------------------------------
    def _write(self, t: float, i: int, nbytes: float) -> float:
        """Write nbytes of file i's delalloc, submitted at t; its share of the file's
        reservation comes back when the write completes."""
        if self.size[i] <= self.r.max_inline:
            done = t  # an inline extent: written into the metadata, no data IO to wait for
        else:
            service = max(nbytes * self.byte_ns, self.min_service)
            self.device_free = max(self.device_free, t) + service
            done = max(self.device_free, t + self.latency)
        heapq.heappush(self.releases, (done, self.rsv[i] * nbytes / self.size[i]))
        self.left[i] -= nbytes
        self.delalloc -= nbytes
        return done

    def _released_by(self, t: float) -> None:
        while self.releases and self.releases[0][0] <= t:
            self.free += heapq.heappop(self.releases)[1]

    def _granted_by(self, need: float, until: float) -> float | None:
        """The moment, not after `until`, when completed writes make `need` fit."""
        while self.free < need and self.releases and self.releases[0][0] <= until:
            when, nbytes = heapq.heappop(self.releases)
            self.free += nbytes
            if self.free >= need:
                return when
        return None

    # -- flushers -----------------------------------------------------------------------
    def _flush_oldest(self, t: float, older_than: float = math.inf, above: float = -1.0) -> None:
        """Background and periodic writeback: whole files, oldest first, not counted as
        reclaim (wb_writeback for_background / for_kupdate)."""
        while self.head < self.tail and self.dirtied[self.head] <= older_than and self.delalloc > above:
            t += self.inode_cpu
            self._write(t, self.head, self.left[self.head])
            self.head += 1

    def _reclaim(self, s: float, ticket: float) -> None:
        """One loop of shrink_delalloc(to_reclaim = ticket), started at s."""
        if self.loops == 0:  # a new flush_space call: to_reclaim is fixed for its 3 loops
            self.calls += 1
            self.requested += ticket
            self.granted_in_call = False
            self.to_reclaim = ticket
        items = max(1, int(self.to_reclaim // insert_size(self.r.nodesize, 1))) * 2
        clock, last_done = s, s
        if self.flush_pages:
            budget = int(min(self.delalloc, items * EXTENT_SIZE_PER_ITEM)) // PAGE
            while budget > 0 and self.head < self.tail:
                i = self.head
                pages = min(math.ceil(self.left[i] / PAGE), budget)
                nbytes = min(self.left[i], pages * PAGE)
                clock += self.inode_cpu
                last_done = max(last_done, self._write(clock, i, nbytes))
                budget -= pages
                self.flushed += nbytes
                self.reclaim_inodes += 1
                if self.left[i] <= 0:  # a partly written inode stays first in the list
                    self.head += 1
        else:
            for _ in range(items):
                if self.head >= self.tail:
                    break
                clock += self.inode_cpu
                self.flushed += self.left[self.head]
                last_done = max(last_done, self._write(clock, self.head, self.left[self.head]))
                self.head += 1
                self.reclaim_inodes += 1
        self.loops += 1
        # FLUSH_DELALLOC sleeps to the next tick; FLUSH_DELALLOC_WAIT waits for the writes.
        self.wake = last_done if self.wait_ordered else (math.floor(clock / self.jiffy) + 1) * self.jiffy
        if self.loops == LOOPS_PER_CALL:
            self.loops = 0
            self.wait_ordered = not self.granted_in_call  # no progress: the next state waits

    # -- the writer ---------------------------------------------------------------------
    def _reserve(self, t: float, need: float) -> float:
        """When a reservation of `need` bytes asked at t succeeds."""
        if self.releases and self.releases[0][0] <= t:
            self._released_by(t)
        if self.free >= need:
            return t
        self.waits += 1
        if t >= self.wake:  # the worker found no ticket when it last woke and went idle
            self.loops, self.wait_ordered = 0, False
        while True:
            s = max(t, self.wake)
            granted = self._granted_by(need, s)
            if granted is not None:
                self.granted_in_call = True
                return max(t, granted)
            if self.head >= self.tail and not self.releases:
                raise ReservationStuck(f"{need:.0f} bytes wanted, {self.free:.0f} free, nothing left to flush")
            self._reclaim(s, need)

    def run(self) -> float:
        """Create every file; the time the last one is written (ns)."""
        r = self.r
        create = insert_size(r.nodesize, CREATE_ITEMS)
        feed = Feed(r.source_rate, r.source_buffer)
        t = 0.0
        for i, size in enumerate(self.size):
            t = start = feed.take(t, size)
            t = self._reserve(t, create)  # the create's transaction, returned when it ends
            t += r.file_cpu_ns
            t = self._reserve(t, self.rsv[i])  # the write's delalloc reservation, kept
            self.free -= self.rsv[i]
            self.waited_ns += t - start - r.file_cpu_ns
            t += size * 1e9 / r.write_rate
            self.dirtied[i] = t
            self.tail = i + 1
            self.delalloc += size
            while self.next_kupdate <= t:
                self._flush_oldest(self.next_kupdate, older_than=self.next_kupdate - DIRTY_EXPIRE_NS)
                self.next_kupdate += WRITEBACK_INTERVAL_NS
            if self.delalloc > r.background_bytes:
                self._flush_oldest(t, above=r.background_bytes)
        return t

    def metrics(self, end_ns: float) -> dict:
        return {
            "untar_seconds": round(end_ns / 1e9, 3),
            "flush_space_count": int(self.calls),
            "reclaim_requested_bytes": int(self.requested),
            "delalloc_flushed_bytes": int(self.flushed),
            "overflush_ratio": round(self.flushed / self.requested, 3) if self.requested else None,
            "reclaim_inodes_flushed": int(self.reclaim_inodes),
            "reservation_waits": int(self.waits),
            "flush_wait_seconds": round(self.waited_ns / 1e9, 3),
        }


def simulate(r: MetadataReservations, device: Device, inode_cpu_ns: float, flush_pages: bool) -> dict:
    loop = ReservationLoop(r, device, inode_cpu_ns, flush_pages)
    return loop.metrics(loop.run())
