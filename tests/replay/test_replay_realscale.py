"""Own-kernel replay of the real-scale captures (sample_traces/capture/18-24 and 37-44), on the run
of each scenario held back from fitting (manifest role "holdout"): every timed metric the
capture shows, and the bytes and inodes behind them, within 25% of what it recorded. The
models were never adjusted against these files (dbench-stable1-ext4's holdout is run 3:
run 2 was used to debug the stable-pages model, and became a fit run; so is
sync-dbench-ext4's, whose run 2 was replayed while the folio sizes were being changed, and
sync-fsmark-ext4-unfiltered's and sync-fio-shared-disk-ext4's, likewise replaced by a run 3)."""

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
    "fio-rewrite-stable-ext4": [("stable-page-wait", m) for m in ("write_stall_count", "write_stall_p50_ms", "write_stall_p99_ms",
                                                                  "write_stall_max_ms", "write_max_ms")],
    # Recorded without block events: the device is measured from inode writeback alone.
    "sync-fsmark-ext4-noblock": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    # Recorded without block events: the log commits are timed by the btree inode's writeback.
    "fsync-btrfs-noblock": [("btrfs-full-fsync-fallback", m) for m in ("fsync_p50_ms", "fsync_mean_ms", "fsync_p99_ms", "fsync_max_ms")],
    # dbench deletes most files before writeback reaches them, and reuses their inode numbers.
    "sync-dbench-ext4": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    # Recorded unfiltered: the host's filesystem under the loop device shows too, and a
    # throttle paces the flusher itself, so nothing piles up before the device.
    "sync-fsmark-ext4-unfiltered": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    # A sync while another filesystem on the disk under the loop device has 600 MB dirty:
    # sync(2) writes that one first, and the replay takes the time before this
    # filesystem's WB_SYNC_ALL work as recorded.
    "sync-fio-shared-disk-ext4": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    # btrfs: the sync's caller waits for pages background writeback submitted before the
    # sync, then ->sync_fs commits the transaction; both replayed as recorded.
    "sync-fsmark-btrfs": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync"),
                          ("btrfs-delalloc-overflush", "delalloc_flushed_bytes")],
    # The sync writes 3,000 files a syncfs wrote before a chmod dirtied their metadata only.
    "sync-chmod-ext4": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync")],
    "untar-full-btrfs": [("sync-flusher-stall", "sync_seconds"), ("sync-flusher-stall", "inodes_written_during_sync"),
                         ("btrfs-delalloc-overflush", "delalloc_flushed_bytes")],
}

# Where the held-out run misses, with what was measured when it was first replayed.
MISSED = {
    ("fsync-btrfs-noblock", "fsync_max_ms"): (
        "the longest fsync replays as 100.7 ms against 76.9 ms (+31%); mean, p50 and p99 are within 5%, and all four within "
        "4% on the fit run. Not investigated: a held-out run is only ever compared"),
}
CASES = [pytest.param(scenario, problem, metric, id=f"{scenario}-{metric}",
                      marks=[pytest.mark.xfail(strict=True, reason=MISSED[scenario, metric])] if (scenario, metric) in MISSED else [])
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
