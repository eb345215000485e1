"""Own-kernel replay of the real-scale captures (sample_traces/capture/18-24), on the run
of each scenario held back from fitting (manifest role "holdout"): every timed metric the
capture shows, and the bytes and inodes behind them, within 25% of what it recorded. The
models were never adjusted against these files; a miss stays a strict xfail that gives the
measured numbers and what the model lacks."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor as run_cli

TOLERANCE = 0.25
HOLDOUT = {m["scenario"]: m["file"] for m in samples() if m.get("role") == "holdout"}

# scenario → (problem, metric) the capture shows and the own-kernel policy models.
SHOWN = {
    "snapshot-seq-btrfs": [("btrfs-snapshot-livelock", "snapshot_seconds"), ("btrfs-snapshot-livelock", "written_during_snapshot_bytes")],
    "snapshot-rand4-btrfs": [("btrfs-snapshot-livelock", "snapshot_seconds"), ("btrfs-snapshot-livelock", "written_during_snapshot_bytes"),
                             ("btrfs-delalloc-overflush", "delalloc_flushed_bytes")],
    "sync-fsmark-xfs": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    "fsync-memcg-btrfs": [("btrfs-full-fsync-fallback", m) for m in ("fsync_p50_ms", "fsync_mean_ms", "fsync_p99_ms", "fsync_max_ms")],
    "dbench-stable1-ext4": [("stable-page-wait", m) for m in ("write_stall_count", "write_stall_p50_ms", "write_stall_p99_ms",
                                                              "write_stall_max_ms", "write_max_ms")],
    "dbench-stable0-ext4": [("stable-page-wait", "write_stall_count"), ("stable-page-wait", "write_max_ms")],
    "untar-full-btrfs": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync"),
                         ("btrfs-delalloc-overflush", "delalloc_flushed_bytes")],
}

_DBENCH_STALLS = (
    "dbench, 5 clients on shared files, stable_writes=1 on a 40 MiB/s throttled loop device: the capture shows 5 writes "
    "waiting ~400 ms each, behind a flusher pass of the 16 MiB strict bdi limit. The model places the flusher's passes "
    "but not those five waits where they happened; each writer it leaves un-stalled runs ~0.4 s ahead of itself and "
    "meets other clients' fsync IO on the shared files: 64 short predicted stalls (p50 2.4 ms, max 214 ms). Measured "
    "on the fit run: a write wants every page at the call's start, but a 64 KiB pwrite64 dirtied its folios at pages 0, 8, "
    "12 and 14 in 1.5 ms and then waited 419 ms for page 15, which the flusher put under writeback after the call began; and the device "
    "is a FIFO fitted at 19 MB/s, where blk-throttle (io.max) holds bios before block_bio_queue (one flusher pass's "
    "inodes left writeback 2-4 ms after submission, another's 420 ms). Wanting each page after the previous one and "
    "taking each inode's recorded end of writeback (sb_clear_inode_writeback), alone or together, gave 40-95 "
    "stalls against 7: ext4 traces which "
    "inodes a pass wrote, not which pages, and these inodes stay under writeback across passes")
XFAIL = {("dbench-stable1-ext4", m): _DBENCH_STALLS
         for m in ("write_stall_count", "write_stall_p50_ms", "write_stall_p99_ms", "write_stall_max_ms")}

CASES = [pytest.param(scenario, problem, metric, id=f"{scenario}-{metric}",
                      marks=[pytest.mark.xfail(strict=True, reason=XFAIL[scenario, metric])] if (scenario, metric) in XFAIL else [])
         for scenario, shown in SHOWN.items() for problem, metric in shown]


@pytest.fixture(scope="module")
def replays():
    done: dict[str, dict] = {}

    def get(scenario: str) -> dict:
        if scenario not in done:
            r = run_cli("replay", str(SAMPLES / HOLDOUT[scenario]), "--json")
            assert r.code == 0, r.err
            done[scenario] = json.loads(r.out)
        return done[scenario]
    return get


def test_every_scenario_has_a_holdout():
    assert set(SHOWN) == set(HOLDOUT)


@pytest.mark.parametrize("scenario, problem, metric", CASES)
def test_own_kernel_replay_of_the_holdout(replays, scenario, problem, metric):
    doc = replays(scenario)
    [row] = [r for r in doc["results"] if r["problem"] == problem and r["own_kernel"]]
    observed = doc["observed"][problem].get(metric)
    predicted = row["metrics"].get(metric)
    assert observed is not None, f"the capture does not show {metric}"
    assert abs(predicted - observed) <= TOLERANCE * abs(observed) or (observed == 0 and predicted == 0), \
        f"{metric}: replay {predicted} vs capture {observed}"
    if observed:
        # the document's own-kernel error is the same comparison, and warns beyond 25%
        assert row["own_kernel_error"][metric]["observed"] == observed
