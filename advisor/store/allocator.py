"""Give freed memory back to the kernel while a store is written.

glibc serves a large malloc with mmap, and each time such a block is freed it raises its
mmap threshold to that block's size (up to 32 MiB on 64-bit), so the next Arrow buffers
of the parser's batches come from the heap instead, and what they free stays resident
until the heap's top is trimmed. Fixing both thresholds, as MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_ in the environment would, turns the dynamic adjustment off: with
glibc's starting value (128 KiB) ingest of a 0.83 M-event btrfs capture peaked at 282 MiB
resident before, 256 MiB after, in the same time. At 4 MiB the Parquet encoder's page
and row-group buffers stay on the heap instead of being mapped and unmapped each time
(page faults, and a TLB shootdown on every unmap, with the parser thread running):
ingest of 7.13 M events took 0.28 s of system time instead of 1.07 s and 17% less wall
time, of 15.6 M events 0.3 s instead of 2.2 s, at 13-17 MiB more peak RSS (173 -> 190
MiB; 190 -> 203 MiB on that btrfs capture).
"""

from __future__ import annotations

import ctypes
import os

_M_TRIM_THRESHOLD = -1  # <malloc.h>
_M_MMAP_THRESHOLD = -3
_THRESHOLD_BYTES = 4 * 1024 * 1024


def _glibc():
    """The C library when it is glibc (musl and others have neither the thresholds nor malloc_trim)."""
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - present in glibc alone
    except (OSError, AttributeError):
        return None
    return libc


def return_freed_memory() -> None:
    """On glibc only (musl and others have no such thresholds); a user's own
    MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ is left as set."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return
    libc = _glibc()
    if libc is None:
        return
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, _THRESHOLD_BYTES)
    mallopt(_M_TRIM_THRESHOLD, _THRESHOLD_BYTES)


def trim_freed_memory() -> None:
    """Hand back what the parser and encoder threads freed, before DuckDB builds the
    catalog. Each thread allocates from its own glibc arena, and an arena gives back
    only the free space at its top: the free chunks between live ones stay resident
    after the threads end. malloc_trim(0) releases the free pages anywhere in every
    arena. On an `-e all` capture (2,323 event formats, 751 k events) 93 of 163 MiB
    resident was such free space when the parsers were done, and DuckDB's catalog then
    grew on top of it: ingest peaked at 259-264 MiB without this, 215-220 MiB with it
    (3 runs each); each call takes under 10 ms."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
