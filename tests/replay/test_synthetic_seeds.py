"""Replaying the seeds' own benchmarks (synthetic workloads with the seeds' parameters)
must give the seeds' published before/after ratios within 30%. Where the model cannot
honestly reach a seed's number the test is a strict xfail that says why: no constant is
tuned to a seed."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from advisor.analyze import replay as engine

TOLERANCE = 0.30


def run(description: str, problem: str) -> dict[str, dict]:
    """policy id → metrics of one problem, for a synthetic workload."""
    doc = engine.replay(engine.synthetic(description), engine.select([problem], None))
    assert not doc["not_applicable"], doc["not_applicable"]
    assert doc["observed"] == {problem: {}}  # nothing is observed in a synthetic workload
    return {r["policy"]: r["metrics"] for r in doc["results"]}


def within(ratio: float, published: float) -> bool:
    return abs(ratio - published) <= TOLERANCE * published


def test_snapshot_sequential_writer_seed():
    # 3cd24c698004: one sequential fio writer, snapshot after 5 s: 1m58s untagged, 6.54 s tagged.
    m = run("fio-snapshot", "btrfs-snapshot-livelock")
    ratio = m["untagged"]["snapshot_seconds"] / m["tagged"]["snapshot_seconds"]
    assert within(ratio, 118 / 6.54), f"untagged/tagged {ratio:.2f} vs published {118 / 6.54:.2f}"
    # The untagged sweep chases the writer until fio's runtime ends (115 s after the ioctl).
    assert m["untagged"]["snapshot_seconds"] > 115
    assert m["untagged"]["late_written_fraction"] > 0.9 and m["tagged"]["late_written_fraction"] == 0


def test_snapshot_random_writers_seed():
    # Four random writers: 15.83 s untagged vs 10.35 s tagged. The snapshot is over some
    # 15 s after it starts, long before fio's 120 s end: writes after that change nothing,
    # so the run stops at 30 s (the same random offsets, only fewer of them).
    m = run("fio-snapshot:rw=randwrite,jobs=4,runtime=30s", "btrfs-snapshot-livelock")
    ratio = m["untagged"]["snapshot_seconds"] / m["tagged"]["snapshot_seconds"]
    assert within(ratio, 15.83 / 10.35), f"untagged/tagged {ratio:.2f} vs published {15.83 / 10.35:.2f}"
    # "we omit only half of the pages dirtied after snapshot command": a part, not all.
    assert 0.2 < m["untagged"]["late_written_fraction"] < 0.6


@pytest.mark.xfail(strict=True, reason=(
    "the sync model gives wait-per-inode 35.4 s against for-sync 20.3 s here (1.74x; the SATA SSD preset and "
    "the 20 us default flusher CPU per inode), against 7.6x published. Only the inodes dirtied while the "
    "WB_SYNC_NONE pass ran are waited on one by one (the WB_SYNC_NONE pass never waited, before or after "
    "the fix); the seed's 52.4 s implies ~108 us of waiting per inode over some 450k of them, and the seed "
    "does not say what device or VM it ran on"))
def test_sync_under_fsmark_seed():
    m = run("fsmark-sync", "sync-flusher-stall")
    ratio = m["wait-per-inode"]["sync_seconds"] / m["for-sync"]["sync_seconds"]
    assert within(ratio, 52.4 / 6.93), f"wait-per-inode/for-sync {ratio:.2f} vs published {52.4 / 6.93:.2f}"


def test_sync_under_fsmark_direction():
    """The direction only: the magnitude is the seed test's (above)."""
    m = run("fsmark-sync", "sync-flusher-stall")
    assert m["wait-per-inode"]["sync_seconds"] > m["for-sync"]["sync_seconds"]
    assert m["wait-per-inode"]["writer_stall_seconds"] > 0 == m["for-sync"]["writer_stall_seconds"]


# 5e548b3201's table: jobs → throughput gain of the fix.
FSYNC_GAINS = {2: 0.191, 4: 0.378, 8: 0.747, 16: 1.463, 32: 2.127}


@pytest.mark.xfail(strict=True, reason=(
    "the full-fsync model charges one checksum lookup (2 us, assumed) per extent of the "
    "transaction times the concurrent fsyncs; with one fsync per 64 KiB write that is "
    "thousands of extents per fsync, so it predicts a large loss already at 1 job where the "
    "seed shows +0.7%, and no saturation. The lookups' real cost and contention law are "
    "not in any capture here (they need an affected kernel)"))
@pytest.mark.parametrize("jobs", sorted(FSYNC_GAINS))
def test_fsync_jobs_seed(jobs):
    total = "64G" if jobs >= 32 else "32G"
    m = run(f"fsync-jobs:jobs={jobs},total={total}", "btrfs-full-fsync-fallback")
    gain = m["fast-fsync"]["fsync_writer_mib_s"] / m["full-sync-on-release"]["fsync_writer_mib_s"] - 1
    assert within(gain, FSYNC_GAINS[jobs]), f"{jobs} jobs: gain {gain:+.0%} vs published {FSYNC_GAINS[jobs]:+.0%}"


def _dbench_max_ms() -> tuple[float, float]:
    # 60 s: two passes of the flusher over expired inodes (30 s dirty_expire).
    m = run("dbench:runtime=60s", "stable-page-wait")
    return m["always-wait"]["write_max_ms"], m["wait-if-required"]["write_max_ms"]


def test_stable_pages_dbench_direction():
    # ext2 59.8 -> 4.3 ms, xfs 104 -> 6.3 ms on a laptop disk that needs no stable pages.
    before, after = _dbench_max_ms()
    assert before >= 10, f"always-wait max write latency {before} ms"
    assert after <= 10, f"wait-if-required max write latency {after} ms"


@pytest.mark.xfail(strict=True, reason=(
    "the flusher's pass over expired inodes is submitted at once into one FIFO at queue "
    "depth 1, so a write into the last inode waits for the whole pass: hundreds of ms, not "
    "the seed's 60-104 ms; how CFQ and the request queue released that IO is not modelled"))
def test_stable_pages_dbench_size():
    before, _ = _dbench_max_ms()
    assert 10 <= before <= 104 * (1 + TOLERANCE), f"always-wait max write latency {before} ms"


@functools.lru_cache(maxsize=None)
def _untar(description: str) -> dict[str, dict]:
    return run(description, "btrfs-delalloc-overflush")


# e076ab2a2ca7: Firefox untar 5.10 1m26.2s vs 5.10+patch 38.8 s (256 GiB, 56 cores, 2 TiB
# Intel NVMe); consumer SSD (8 GiB RAM) 5.10.5 4m00s vs 1m08s.
UNTAR_SEEDS = {
    "untar:mem=256G,device=nvme": 86.212 / 38.8,
    "untar:mem=8G,device=ssd": 240 / 68,
}


@pytest.mark.xfail(strict=True, reason=(
    "the closed reservation loop gives 5.10 about 111 s (the seed: 86 s), but the fixed kernel's untar is "
    "bound by the writer: 14.6 s from xz -d at 110 MB/s (lzbench, one core) plus 30 us of tar per file, where "
    "the seed measured 38.8 s (1m08s on the consumer SSD); 5.10's time is set by one 4 ms tick (CONFIG_HZ=250, "
    "the Kconfig default) per ~9 files and the fix's by the writer, so the ratio (7.6x) is as wrong as the "
    "writer speed, which the seed does not give (nor its CONFIG_HZ or how full the filesystem was)"))
@pytest.mark.parametrize("description", sorted(UNTAR_SEEDS))
def test_untar_seed(description):
    m = _untar(description)
    ratio = m["flush-inodes"]["untar_seconds"] / m["flush-pages"]["untar_seconds"]
    assert within(ratio, UNTAR_SEEDS[description]), f"{description}: {ratio:.2f} vs published {UNTAR_SEEDS[description]:.2f}"


def test_untar_direction():
    m = _untar("untar:mem=256G,device=nvme")
    before, after = m["flush-inodes"], m["flush-pages"]
    assert before["untar_seconds"] > 2 * after["untar_seconds"]
    # 5.10 asks again and again: each step writes `items` (10) small inodes, far fewer
    # bytes than the fix's items * 256 KiB of pages, so it is asked about ten times as often.
    assert before["flush_space_count"] > 5 * after["flush_space_count"] > 0
    assert before["overflush_ratio"] < 1 < after["overflush_ratio"]
    assert before["flush_wait_seconds"] > 10 * after["flush_wait_seconds"]


def test_untar_without_reservation_pressure_is_the_writer_alone():
    # With room for every reservation no ticket waits: both policies give the unhindered
    # writer's time, the one the workload's dirtying events were laid out on.
    w = engine.synthetic("untar:files=3000,total=16M,metadata_free=1T")
    doc = engine.replay(w, engine.select(["btrfs-delalloc-overflush"], None))
    for r in doc["results"]:
        assert r["metrics"]["flush_space_count"] == 0 and r["metrics"]["reservation_waits"] == 0
        assert r["metrics"]["untar_seconds"] == pytest.approx(w.end_ts / 1e9, abs=1e-3)


def test_reservation_sizes_are_the_kernels():
    from advisor.problems.btrfs_delalloc_overflush.space import CREATE_ITEMS, delalloc_reservation, insert_size

    # 16 KiB nodes: insert = 16K * 8 levels * 2 = 256 KiB per item; btrfs_create's 5 items.
    assert insert_size(16384, CREATE_ITEMS) == 1.25 * 2**20
    # A small file: 1 extent + 1 csum leaf (insert) + the inode update (16K * 8).
    assert delalloc_reservation(16384, np.array([4096.0]))[0] == 640 * 2**10
    # 4064 crc32c sums per leaf: a 32 MiB file needs 3 csum leaves.
    assert delalloc_reservation(16384, np.array([32.0 * 2**20]))[0] == (1 + 3) * 256 * 2**10 + 128 * 2**10
