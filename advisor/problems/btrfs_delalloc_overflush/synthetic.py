"""The benchmark published with e076ab2a2ca7: `tar xf` of Firefox's source tarball
(360 MiB xz, 1.5 GiB uncompressed) onto btrfs; 5.10 took 1m26s, 5.10 with the fix 38.8 s
(256 GiB RAM, 56 cores, 2 TiB Intel NVMe); on a consumer SSD (8 GiB RAM) 4m00s vs 1m08s.

tar is one task creating the files one after another, each with one buffered write of its
data, fed through a pipe by the decompressor (a second process: `tar xJf` runs `xz -d`),
which runs ahead of tar by at most the pipe's 64 KiB (pipe(7)). File sizes are
log-normal with the given median and total/files as mean. Every create and write reserves
btrfs metadata; the reservation loop itself is replayed (closed_loop.py), so
this workload has no recorded flush requests: the policy decides how many there are.
"""

from __future__ import annotations

import math

import numpy as np

from advisor.errors import UsageError
from advisor.problems.btrfs_delalloc_overflush.space import CREATE_ITEMS, delalloc_reservation, insert_size, unhindered_write_ends
from advisor.replay.synthetic.description import Param
from advisor.replay.synthetic.machine import Machine, check_size
from advisor.replay.workload import MetadataReservations, Workload

NAME = "untar"
SUMMARY = "tar extracting a large source tree onto btrfs (the benchmark published with e076ab2a2ca7: Firefox's source, 1.5 GiB from 360 MiB xz)"
DEVICE = "nvme"
PARAMS = {
    "files": Param("280000", "count", "files in the tree (Firefox 84's source: about 280,000, assumed)"),
    "total": Param("1.5G", "size", "uncompressed size of the tree (the published benchmark: 1.5 GiB)"),
    "median_size": Param("3k", "size", "median file size; sizes are log-normal with this median and mean total/files"),
    "decompress_rate": Param("110MB/s", "rate", "the decompressor's output rate (xz -d on one core; zstd -d is ~800MB/s)"),
    "file_cpu": Param("30us", "duration", "tar's own system calls per file (openat, write, fchmod, utimensat, close)"),
    "write_rate": Param("1G", "rate", "buffered write speed (copy into the page cache)"),
    "metadata_free": Param("1G", "size", "metadata bytes reservations may take before they wait: free space in the "
                           "metadata chunks plus the overcommit allowance (1/8 of unallocated space)"),
    "nodesize": Param("16k", "size", "btrfs nodesize (mkfs default 16 KiB)"),
    "hz": Param("250", "count", "CONFIG_HZ: schedule_timeout(1) sleeps to the next tick (Kconfig default 250)"),
    "seed": Param("1", "count", "file size seed", zero_ok=True),
}
FIRST_INODE = 257  # BTRFS_FIRST_FREE_OBJECTID
PAGE = 4096
PIPE_BYTES = 65536  # the default pipe capacity, 16 pages


def file_sizes(files: int, total: int, median: int, seed: int) -> np.ndarray:
    mean = total / files
    if median >= mean:
        raise UsageError(f"--workload {NAME}: median_size={median} must be below the mean file size "
                         f"total/files = {mean:.0f} (a log-normal's median is below its mean)")
    sigma = math.sqrt(2 * math.log(mean / median))
    sizes = np.random.default_rng(seed).lognormal(math.log(median), sigma, files)
    sizes *= total / sizes.sum()  # the tree's size exactly
    return np.maximum(1, np.round(sizes)).astype(np.int64)


def build(v: dict, m: Machine) -> Workload:
    files, total = v["files"], v["total"]
    nodesize = v["nodesize"]
    if nodesize < PAGE or nodesize & (nodesize - 1):
        raise UsageError(f"--workload {NAME}: nodesize={nodesize} must be a power of two of at least 4k")
    check_size(NAME, max(files, total / PAGE))  # before any array is made
    sizes = file_sizes(files, total, v["median_size"], v["seed"])
    pages = np.ceil(sizes / PAGE).astype(np.int64)
    n = check_size(NAME, pages.sum())
    largest = float(delalloc_reservation(nodesize, sizes.astype(np.float64)).max())
    create = insert_size(nodesize, CREATE_ITEMS)
    if v["metadata_free"] < largest + create:
        raise UsageError(f"--workload {NAME}: metadata_free={v['metadata_free']} cannot hold one file's reservations "
                         f"({largest + create:,.0f} bytes)")
    ino = np.repeat(FIRST_INODE + np.arange(files, dtype=np.int64), pages)
    first = np.repeat(np.cumsum(pages) - pages, pages)
    idx = np.arange(n, dtype=np.int64) - first
    reservations = MetadataReservations(
        file_bytes=sizes, file_cpu_ns=float(v["file_cpu"]), write_rate=float(v["write_rate"]),
        source_rate=float(v["decompress_rate"]), source_buffer=PIPE_BYTES,
        metadata_free=float(v["metadata_free"]), hz=int(v["hz"]), nodesize=int(nodesize),
        background_bytes=m.background_bytes)
    ends = unhindered_write_ends(reservations).astype(np.int64)
    small = sizes[sizes <= reservations.max_inline]
    w = Workload(
        source=f"synthetic {NAME}: {files:,} files, {total / 2**30:g} GiB, median {v['median_size']:,} bytes",
        page_size=PAGE, start_ts=0, end_ts=int(ends[-1]),
        dirty_ts=np.repeat(ends, pages), dirty_ino=ino, dirty_idx=idx, dirty_pid=np.zeros(n, np.int64),
        device=m.device, dirty_limit_pages=int(m.limit_bytes // PAGE), folio_bytes=PAGE, reclaim_events=0,
        reservations=reservations,
        assumptions=[
            f"file sizes log-normal, median {v['median_size']:,} bytes, mean {total / files:,.0f} bytes "
            f"({len(small):,} files of at most 2 KiB are inlined in the metadata: no data write)",
            f"tar is fed by the decompressor at {v['decompress_rate'] / 1e6:g} MB/s through a 64 KiB pipe, and spends "
            f"{v['file_cpu'] / 1e3:g} us of its own per file",
            f"metadata reservations: {create / 2**20:g} MiB while a file is created (5 items), "
            f"{float(delalloc_reservation(nodesize, np.array([4096.0]))[0]) / 2**10:g} KiB per small file's delalloc "
            f"until its write completes; {v['metadata_free'] / 2**30:g} GiB may be reserved before tickets wait "
            "(the published benchmark does not say how full the filesystem was)",
            "only delalloc frees metadata space: the delayed-item, delayed-ref, chunk and commit states of "
            "flush_space are taken to free nothing and cost no time, and the tree's own growth is not counted",
        ],
    )
    w.assumptions.append(f"schedule_timeout(1) sleeps to the next tick of a {v['hz']} Hz clock; the same flush CPU per "
                         f"inode ({w.inode_writeback_ns / 1e3:g} us, the replay's default) for 5.10's per-inode work "
                         "items and the fix's sync_inode")
    return w
