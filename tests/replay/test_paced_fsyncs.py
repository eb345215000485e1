"""Tasks that call fsync on a schedule (a rate-limited writer) keep their recorded calls
in the btrfs fsync replay; tasks in a closed loop keep the work between a return and the
next call (advisor/replay/workload.py, Ops.paced)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from advisor.replay.workload import MIN_PACED_GAPS, Ops
from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli

PROBLEM = "btrfs-full-fsync-fallback"


def task(pid, calls, durations):
    calls = np.asarray(calls, np.int64)
    return Ops(np.full(len(calls), pid, np.int64), calls, calls + np.asarray(durations, np.int64), np.full(len(calls), 5))


def both(a: Ops, b: Ops) -> Ops:
    return Ops(*(np.concatenate([getattr(a, k), getattr(b, k)]) for k in ("pid", "start", "end", "ino")))


def test_a_writer_on_a_clock_is_paced_a_closed_loop_is_not():
    rng = np.random.default_rng(3)
    n = 40
    fsync = rng.integers(5_000_000, 30_000_000, n)
    # Every 40 ms whatever the fsync took (fio --rate_iops), 100 us of jitter.
    clock = task(1, np.arange(n) * 40_000_000 + rng.integers(0, 100_000, n), fsync)
    # The next call 2-12 ms of work after each return.
    loop_calls = np.cumsum(np.concatenate([[0], fsync[:-1] + rng.integers(2_000_000, 12_000_000, n - 1)]))
    loop = task(2, loop_calls, fsync)
    ops = both(clock, loop)
    assert list(np.unique(ops.pid[ops.paced()])) == [1]


def test_too_few_calls_say_nothing():
    calls = np.arange(MIN_PACED_GAPS) * 40_000_000  # MIN_PACED_GAPS calls: one gap too few
    assert not task(1, calls, np.linspace(5e6, 30e6, len(calls))).paced().any()
    calls = np.arange(MIN_PACED_GAPS + 1) * 40_000_000
    assert task(1, calls, np.linspace(5e6, 30e6, len(calls))).paced().all()


def test_a_return_not_seen_is_not_a_gap():
    calls = np.arange(30) * 40_000_000
    ops = task(1, calls, np.linspace(5e6, 30e6, 30))
    ops.end[::2] = -1  # every other return lost: 14 gaps known, still a clock
    assert ops.paced().all()
    ops.end[1::2] = -1
    assert not ops.paced().any()


def replay(sample):
    r = run_cli("replay", str(SAMPLES / sample), "--problem", PROBLEM, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    [own] = [x for x in doc["results"] if x["problem"] == PROBLEM and x["own_kernel"]]
    return doc, own


def test_fio_at_a_fixed_rate_replays_on_its_clock():
    # The lab's fio jobs: 100 IOPS each, an fsync every 4 writes, so a call every 40 ms.
    doc, own = replay("lab-btrfs-full-fsync-fallback-stock-run1-v7-zstd.dat")
    [said] = [a for a in doc["workload"]["assumptions"] if "keep a schedule" in a]
    assert said.startswith("4 of 4 tasks calling fsync keep a schedule (a call every 40.0 ms median")
    observed = doc["observed"][PROBLEM]
    for metric in ("fsync_p50_ms", "fsync_mean_ms", "fsync_p99_ms", "log_commits"):
        assert abs(own["metrics"][metric] - observed[metric]) <= 0.25 * observed[metric], metric
    # On its clock a faster policy shortens the fsyncs, not the schedule: the throughput
    # is the rate's, the same under both policies.
    rates = {x["policy"]: x["metrics"]["fsync_writer_mib_s"] for x in doc["results"] if x["problem"] == PROBLEM}
    assert len(set(rates.values())) == 1


@pytest.mark.parametrize("sample", ["dbench-btrfs-v7-zstd.dat", "fsync-memcg-btrfs-run1-v7-zstd.dat", "fsync-fua-btrfs-v7-zstd.dat"])
def test_closed_loops_are_not_paced(sample):
    doc, _ = replay(sample)
    assert not [a for a in doc["workload"]["assumptions"] if "keep a schedule" in a]
