"""The btrfs log commit: what the dbench capture shows of it (advisor/replay/btrfs_log.py)
and the shared-log clock of the fsync model (btrfs_sync_log's rules: one committer per log
transaction, after the previous commit; members return together; batching on a jiffy)."""

from __future__ import annotations

import numpy as np
import pytest

import advisor
from advisor.problems.btrfs_full_fsync_fallback import model as full_fsync
from advisor.replay import loops
from advisor.replay.workload import from_store
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def dbench():
    with advisor.open(SAMPLES / "dbench-btrfs-v7-zstd.dat") as t:
        yield from_store(t.con, "dbench")


def test_log_commits_of_the_dbench_capture(dbench):
    seen = dbench.log_commits
    # 218 primary superblock writes, each inside a dbench fsync (sample_traces/README: 436
    # 'FF' flushes, two per commit), 151 of them returned several fsyncs.
    assert len(seen.commit_ns) == 218 and seen.shared == 151 and seen.solo == 67
    assert seen.tick_ns == 4_000_000  # Debian's CONFIG_HZ=250
    assert np.median(seen.batch_ticks) == 4
    assert 3e6 < np.median(seen.commit_ns) < 6e6  # log writes, a 3 ms loop flush, superblock, post-flush


def test_dbench_fsyncs_write_what_the_capture_shows(dbench):
    # Each fsync writes its inode's dirtying since its previous fsync; with the inode
    # btrfs_sync_file names, that is exactly the bytes of the fsyncs' own data requests
    # (519 'WS', 12,517,376 bytes); the inode dirtied last would give 23.5 MB.
    fsync = dbench.op("fsync")
    data = full_fsync._data_since_previous(dbench, fsync.start, fsync.ino)
    assert data.sum() == 12_517_376


def test_no_log_commits_on_ext4():
    with advisor.open(SAMPLES / "fio-ext4-v7-zstd.dat") as t:
        assert from_store(t.con, "fio").log_commits is None


def test_batching_is_what_makes_the_dbench_fsyncs(dbench):
    observed = full_fsync._observed(dbench)["fsync_p50_ms"]
    batched = full_fsync._simulate(dbench, full_fsync.FAST)["fsync_p50_ms"]
    tick = dbench.log_commits.tick_ns
    try:
        dbench.log_commits.tick_ns = 0  # as on an SSD-mode mount: no sleep
        unbatched = full_fsync._simulate(dbench, full_fsync.FAST)["fsync_p50_ms"]
    finally:
        dbench.log_commits.tick_ns = tick
    assert abs(batched - observed) <= 0.25 * observed
    assert unbatched < 0.5 * observed


def shared_log(start, data_ns, commit_ns, tick=0, ticks=2, pid=None, think=None, prep=0, wake=0, paced=False):
    n = len(start)
    pid = np.arange(n, dtype=np.int64) if pid is None else np.asarray(pid, np.int64)
    think = np.zeros(n) if think is None else np.asarray(think, np.float64)
    cost, _busy, commits = loops.shared_log(
        pid, np.asarray(start, np.int64), think, np.full(n, paced), np.asarray(data_ns, np.float64), np.zeros(n),
        np.zeros(n, np.int64),
        full_fsync.COMMIT_INTERVAL_NS, np.full(n, float(commit_ns)), np.full(n, ticks, np.int64), np.full(n, float(prep)),
        np.full(n, float(wake)), tick)
    return cost, commits


def test_a_task_ready_during_a_commit_waits_for_it_then_commits_its_own():
    cost, commits = shared_log([0, 0], [1_000, 2_000], 10_000)
    assert commits == 2
    assert list(cost) == [11_000, 21_000]  # the second: after the first commit (wait_log_commit)
    # It logged its inode while the first commit was written; its own starts `wake` after that one ends.
    cost, commits = shared_log([0, 0], [1_000, 2_000], 10_000, prep=3_000, wake=500)
    assert commits == 2 and list(cost) == [14_000, 24_500]


def test_a_commit_starts_after_its_task_logged_the_inode():
    cost, commits = shared_log([0], [1_000], 10_000, prep=3_000)
    assert commits == 1 and list(cost) == [14_000]
    # Another task ready 1 us later logs its inode 1 us after the first: too late to join
    # (start_log_trans after the committer's log writes began), it commits next.
    cost, commits = shared_log([0, 0], [1_000, 2_000], 10_000, prep=3_000)
    assert commits == 2 and list(cost) == [14_000, 24_000]
    # Logged first, it joins: both return with the one commit.
    cost, commits = shared_log([0, 0], [1_000, 1_000], 10_000, prep=3_000)
    assert commits == 1 and list(cost) == [14_000, 14_000]


def test_every_task_ready_during_a_commit_joins_the_next():
    # Three tasks ready while the first commit (1-11 us) is written all commit at 11 us +
    # wake, together, though their preparation would end at different times.
    cost, commits = shared_log([0, 0, 0, 0], [1_000, 2_000, 3_000, 9_000], 10_000, pid=[1, 2, 3, 4], prep=0, wake=1_000)
    assert commits == 2 and list(cost) == [11_000, 22_000, 22_000, 22_000]


def test_tasks_ready_by_the_commit_return_with_it():
    cost, commits = shared_log([0, 0, 0], [1_000, 1_000, 5_000], 10_000)
    assert commits == 2 and list(cost) == [11_000, 11_000, 21_000]


def test_a_shared_commit_starts_on_a_jiffy_after_its_last_member():
    # Two ready at 1 us: start on the 2nd jiffy boundary after, 8 us; a third ready at
    # 5 us joins during the sleep and moves the start to 2 boundaries after it, 12 us.
    cost, commits = shared_log([0, 0], [1_000, 1_000], 10_000, tick=4_000)
    assert commits == 1 and list(cost) == [18_000, 18_000]
    cost, commits = shared_log([0, 0, 0], [1_000, 1_000, 5_000], 10_000, tick=4_000)
    assert commits == 1 and list(cost) == [22_000, 22_000, 22_000]
    # Alone, the committer does not sleep (no BTRFS_ROOT_MULTI_LOG_TASKS).
    cost, commits = shared_log([0], [1_000], 10_000, tick=4_000)
    assert list(cost) == [11_000]


def test_a_task_runs_its_fsyncs_in_order_with_its_recorded_work_between():
    cost, commits = shared_log([0, 50_000], [1_000, 1_000], 10_000, pid=[7, 7], think=[0, 3_000])
    # Second fsync: called 3 us after the first returned (11 us), ready at 15 us, done 25 us.
    assert commits == 2 and list(cost) == [11_000, 11_000]


def test_a_task_on_a_schedule_keeps_its_recorded_calls():
    # One task's calls recorded at 0 and 50 us, 3 us of work before the second. In a
    # closed loop the second is called 3 us after the first returns; on a schedule, at
    # 50 us as recorded, or at the return if that is later.
    def second_call_returns(commit_ns, paced):
        _cost, busy, _ = loops.shared_log(
            np.array([7, 7]), np.array([0, 50_000]), np.array([0.0, 3_000.0]), np.array([paced, paced]), np.array([1_000.0, 1_000.0]),
            np.zeros(2), np.zeros(2, np.int64), full_fsync.COMMIT_INTERVAL_NS, np.full(2, float(commit_ns)), np.zeros(2, np.int64),
            np.zeros(2), np.zeros(2), 0)
        return busy[1]  # from the task's first call

    assert second_call_returns(10_000, paced=False) == 11_000 + 3_000 + 11_000
    assert second_call_returns(10_000, paced=True) == 50_000 + 11_000
    assert second_call_returns(60_000, paced=True) == 61_000 + 61_000  # the first returned after the slot: called at once


def plain_shared_log(pid, start, think, paced, data_ns, per_extent, slot, txn_ns, commit_ns, batch_ticks, prep, wake, tick):
    """The shared log scanning every task at each commit (the heaps' reference)."""
    tasks = [list(np.flatnonzero(pid == p)) for p in dict.fromkeys(pid.tolist())]
    cost, busy = np.zeros(len(pid)), np.zeros(len(pid))
    txn_of, extents = {}, {}

    def ready_at(t, j):
        txn = t // txn_ns
        if txn_of.get(slot[j]) != txn:
            txn_of[slot[j]], extents[slot[j]] = txn, 0
        extents[slot[j]] += 1
        return t + data_ns[j] + extents[slot[j]] * per_extent[j]

    cur = [0] * len(tasks)
    entry = [float(start[t[0]]) for t in tasks]
    origin = list(entry)
    ready = [ready_at(entry[p], t[0]) for p, t in enumerate(tasks)]
    prev_end, commits = -1e30, 0
    while True:
        active = [p for p in range(len(tasks)) if cur[p] < len(tasks[p])]
        if not active:
            return cost, busy, commits
        joins = {p: ready[p] + prep[tasks[p][cur[p]]] for p in active}
        queued = {p for p in active if ready[p] <= prev_end}
        if queued:
            begin = min([prev_end + wake[commits]] + [joins[p] for p in active if p not in queued])
        else:
            begin = min(joins.values())

        def members():
            return [p for p in active if p in queued or joins[p] <= begin]
        if tick and len(members()) > 1:
            while True:
                latest = max([prev_end] + [ready[p] for p in members()])
                later = (np.floor(latest / tick) + batch_ticks[commits]) * tick
                if later <= begin:
                    break
                begin = later
        done = begin + commit_ns[commits]
        commits += 1
        for p in members():
            j = tasks[p][cur[p]]
            cost[j], busy[j] = done - entry[p], done - origin[p]
            cur[p] += 1
            if cur[p] < len(tasks[p]):
                j = tasks[p][cur[p]]
                entry[p] = max(float(start[j]), done) if paced[j] else done + think[j]
                ready[p] = ready_at(entry[p], tasks[p][cur[p]])
        prev_end = done


@pytest.mark.parametrize("seed", range(6))
def test_the_heaps_equal_the_scan(seed):
    rng = np.random.default_rng(seed)
    n, tasks = 400, int(rng.integers(1, 40))
    pid = np.sort(rng.integers(0, tasks, n)).astype(np.int64)
    start = np.zeros(n, np.int64)
    for p in np.unique(pid):
        mine = np.flatnonzero(pid == p)
        start[mine] = np.sort(rng.integers(0, 200_000, len(mine)))
    think = rng.integers(0, 20_000, n).astype(np.float64)
    paced = np.isin(pid, rng.choice(pid, max(1, tasks // 3)))  # some tasks on a schedule
    data_ns = rng.choice([0.0, 500.0, 3_000.0, 12_000.0], n)
    per_extent = rng.choice([0.0, 700.0], n)
    slot = pid.copy()  # one file per task: the extent count does not depend on commit order
    commit_ns = rng.integers(1_000, 9_000, n).astype(np.float64)
    batch_ticks = rng.integers(0, 5, n).astype(np.int64)
    txn = 150_000
    prep = rng.choice([0.0, 1_500.0, 6_000.0], n)
    wake = rng.choice([0.0, 800.0, 4_000.0], n)
    for tick in (0, 4_000):
        got = loops.shared_log(pid, start, think, paced, data_ns, per_extent, slot, txn, commit_ns, batch_ticks, prep, wake, tick)
        want = plain_shared_log(pid, start, think, paced, data_ns, per_extent, slot, txn, commit_ns, batch_ticks, prep, wake, tick)
        assert got[2] == want[2]
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_fsyncs_on_another_filesystem_are_not_replayed_as_btrfs(store_of):
    """A capture whose fsync_ops names some calls ext4's (here one writer's, relabelled
    on the btrfs memcg capture): the btrfs fsync replay and the rule's count take btrfs's
    alone, and the replay says how many it left out."""
    from advisor.analyze.replay import replay_store
    from advisor.store import open_store
    from advisor.views import attach

    problem = "btrfs-full-fsync-fallback"
    with open_store(store_of("fsync-memcg-btrfs-run1-v7-zstd.dat")) as con:
        views = attach(con)
        con.execute("CREATE TEMP TABLE fsync_calls AS SELECT * FROM fsync_ops")
        ext4_pid, ext4_calls = con.execute("SELECT pid, count(*) FROM fsync_calls GROUP BY pid ORDER BY pid LIMIT 1").fetchone()
        total, btrfs_done = con.execute(f"SELECT count(*), count(*) FILTER (WHERE complete AND pid <> {ext4_pid}) FROM fsync_calls").fetchone()
        assert 0 < ext4_calls < total
        con.execute(f"CREATE OR REPLACE TEMP VIEW fsync_ops AS SELECT * REPLACE (CASE WHEN pid = {ext4_pid} THEN 'ext4' ELSE fs END AS fs) "
                    "FROM fsync_calls")
        doc = replay_store(con, "relabelled", problems=[problem], views=views)
    observed = doc["observed"][problem]
    assert observed["fsync_count"] == btrfs_done
    own = next(r for r in doc["results"] if r["problem"] == problem and r["own_kernel"])
    assert own["metrics"]["fsync_count"] <= total - ext4_calls
    assert any(f"{ext4_calls:,} of the {total:,} fsync calls were on another filesystem" in a for a in doc["workload"]["assumptions"])
