"""`advisor replay` on the real sample captures: replaying a capture under its own
kernel's policy (6.18: every fix present) reproduces what the capture shows, within 25%;
the policies before each fix come out worse in the direction the seeds describe; bad
usage is one line and exit 2."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import SAMPLES, need_trace_cmd
from tests.helpers import advisor as run_cli, one_line_error

TOLERANCE = 0.25


def replay(sample: str, *args) -> dict:
    r = run_cli("replay", str(SAMPLES / sample), *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def own(doc: dict, problem: str) -> dict:
    [row] = [r for r in doc["results"] if r["problem"] == problem and r["own_kernel"]]
    return row["metrics"]


def other(doc: dict, problem: str) -> dict:
    [row] = [r for r in doc["results"] if r["problem"] == problem and not r["own_kernel"]]
    return row["metrics"]


def analyzed(sample: str, rule: str) -> dict:
    r = run_cli("analyze", str(SAMPLES / sample), "--rule", rule, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)["findings"][0]["metrics"]


def close(predicted: float, observed: float) -> bool:
    return abs(predicted - observed) <= TOLERANCE * abs(observed)


# Every (sample, metric) where the capture shows what the replay predicts: the rule
# measures it (advisor analyze), and the replay's own-kernel policy models it.
FIDELITY = [
    ("sync-xfs-v6.dat", "sync-flusher-stall", "sync_seconds"),
    ("sync-xfs-v6.dat", "sync-flusher-stall", "inodes_written_during_sync"),
    ("tracefs-ext4.dat", "sync-flusher-stall", "sync_seconds"),
    # Two inodes' data, then ->sync_fs: ext4's journal commit with its cache flushes, 7.4 of
    # the 10.2 ms, replayed as recorded from the sync's last data write (no ext4 events here).
    ("blk-ext4-fsync.dat", "sync-flusher-stall", "sync_seconds"),
    ("untar-btrfs-v7-zstd.dat", "sync-flusher-stall", "inodes_written_during_sync"),
    ("untar-btrfs-v7-zstd.dat", "sync-flusher-stall", "sync_seconds"),
    ("snapshot-btrfs-v7-none.dat", "btrfs-snapshot-livelock", "snapshot_seconds"),
    ("snapshot-btrfs-v7-none.dat", "btrfs-snapshot-livelock", "written_during_snapshot_bytes"),
    ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "write_stall_p50_ms"),
    ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "write_stall_p99_ms"),
    ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "write_stall_max_ms"),
    ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "write_stall_count"),
    ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "write_max_ms"),
    ("fio-ext4-v7-zstd.dat", "stable-page-wait", "write_max_ms"),
    # The shared btrfs log commit (batching jiffies, commit lengths and lone commits'
    # preparation measured from the capture's block events, advisor/replay/btrfs_log.py).
    ("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_p50_ms"),
    ("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_mean_ms"),
    pytest.param("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "log_commits", marks=pytest.mark.xfail(strict=True, reason=(
        "299 commits against 218: 188 alone against the capture's 67. The three dbench tasks return from a shared commit "
        "together and call fsync again within 0.1 ms of each other. In the model the first to log its inode always commits "
        "alone. The capture shows both outcomes: one commits alone (log writes at 81.72 ms, 0.11 ms after its data, the other "
        "two ready 0.13 ms before and left out), or all three share a batched commit (log writes at 117.31 ms, "
        "all three ready 11.5 ms before). What decides it is whether another task began logging (start_log_trans, which "
        "sets BTRFS_ROOT_MULTI_LOG_TASKS) before the committer's btrfs_sync_log, and no tracepoint shows when logging "
        "begins. The fsync latencies, which the tests above check, are within 12%"))),
    ("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_p99_ms"),
    ("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_max_ms"),
    ("fsync-reclaim-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_p50_ms"),
    ("fsync-reclaim-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_mean_ms"),
    ("fsync-reclaim-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_p99_ms"),
    ("fsync-reclaim-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "fsync_max_ms"),
    ("untar-btrfs-v7-zstd.dat", "btrfs-delalloc-overflush", "delalloc_flushed_bytes"),
]


@pytest.mark.parametrize("sample, problem, metric", FIDELITY)
def test_own_kernel_policy_reproduces_the_capture(sample, problem, metric):
    # The observed value is the rule's own measurement of the capture (advisor analyze);
    # what no rule measures (the longest write, the log commits), the replay's reading of it.
    doc = replay(sample, "--problem", problem)
    measured = analyzed(sample, problem)
    observed = measured[metric] if metric in measured else doc["observed"][problem][metric]
    predicted = own(doc, problem)[metric]
    assert close(predicted, observed), f"{metric}: replay {predicted} vs capture {observed}"


def test_before_the_fix_is_worse_in_the_seeds_direction():
    # Only the WB_SYNC_ALL pass waits per inode, and on this capture it took 272 of the
    # 4,213 inodes (the WB_SYNC_NONE pass ran first and wrote 3,941): slower, not 10x.
    sync = replay("sync-xfs-v6.dat", "--problem", "sync-flusher-stall")
    assert other(sync, "sync-flusher-stall")["sync_seconds"] > 1.2 * own(sync, "sync-flusher-stall")["sync_seconds"]
    assert other(sync, "sync-flusher-stall")["flusher_waiting_seconds"] > 0 == own(sync, "sync-flusher-stall")["flusher_waiting_seconds"]
    snap = replay("snapshot-btrfs-v7-none.dat", "--problem", "btrfs-snapshot-livelock")
    untagged, tagged = other(snap, "btrfs-snapshot-livelock"), own(snap, "btrfs-snapshot-livelock")
    assert untagged["written_dirtied_after_start_bytes"] > 0 == tagged["written_dirtied_after_start_bytes"]
    assert untagged["snapshot_seconds"] >= tagged["snapshot_seconds"]


# The untar's sync: the flusher's last writeback work ends, then ->sync_fs commits the
# transaction (btrfs_transaction_commit fires as the commit ends), then sync(2) returns.
_UNTAR_COMMIT_SQL = """
WITH s AS (SELECT min(ts) AS t0, (SELECT max(ts) FROM sys_exit_sync) AS t1 FROM sys_enter_sync),
     c AS (SELECT max(ts) AS c FROM btrfs_transaction_commit, s WHERE ts > t0 AND ts <= t1)
SELECT c - (SELECT max(ts) FROM writeback_written, s WHERE ts >= t0 AND ts < c) FROM c
"""


def test_btrfs_sync_replays_the_recorded_commit_under_both_policies():
    r = run_cli("sql", str(SAMPLES / "untar-btrfs-v7-zstd.dat"), _UNTAR_COMMIT_SQL, "--format", "json")
    assert r.code == 0, r.err
    [row] = json.loads(r.out)
    recorded = list(row.values())[0] / 1e9
    doc = replay("untar-btrfs-v7-zstd.dat", "--problem", "sync-flusher-stall")
    for metrics in (own(doc, "sync-flusher-stall"), other(doc, "sync-flusher-stall")):
        assert metrics["transaction_commit_seconds"] == pytest.approx(recorded, abs=1e-6)
        assert metrics["sync_seconds"] > metrics["transaction_commit_seconds"]
    device = doc["workload"]["device"]
    # The tree blocks' own rate, not the overall one the small data writes set.
    assert device["metadata_bandwidth_mb_s"] > 3 * device["bandwidth_mb_s"]
    # The XFS capture has no btrfs transaction commit: nothing is replayed as recorded there.
    assert "transaction_commit_seconds" not in own(replay("sync-xfs-v6.dat", "--problem", "sync-flusher-stall"), "sync-flusher-stall")


def test_stable_pages_policy_follows_the_device():
    # The capture's device needs stable pages (waits on 6.18), so both policies wait;
    # on a kernel before 3.9 the capture's own policy is always-wait.
    doc = replay("stable-pages-ext4-v7-zstd.dat", "--problem", "stable-page-wait", "--kernel", "3.5.0")
    assert own(doc, "stable-page-wait")["write_stall_count"] > 0
    assert doc["workload"]["stable_writes"] is True
    [row] = [r for r in doc["results"] if r["own_kernel"]]
    assert row["policy"] == "always-wait"


def test_json_contract():
    doc = replay("snapshot-btrfs-v7-none.dat")
    assert set(doc) == {"workload", "observed", "not_applicable", "results", "warnings"}
    assert doc["workload"]["device"]["source"].startswith("fitted from the capture")
    assert {r["problem"] for r in doc["results"]} == {"btrfs-snapshot-livelock"}
    assert "sync-flusher-stall" in doc["not_applicable"]
    for r in doc["results"]:
        assert {"problem", "policy", "kernels", "metrics", "own_kernel"} <= set(r)
    own = next(r for r in doc["results"] if r["own_kernel"])
    # the snapshot the capture shows, replayed under its own kernel's (tagged) policy
    assert own["own_kernel_error"]["snapshot_seconds"]["observed"] == doc["observed"]["btrfs-snapshot-livelock"]["snapshot_seconds"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--problem", "no-such-problem"), "unknown problem 'no-such-problem'"),
        (("--policy", "sync-flusher-stall=nope"), "has no policy 'nope'"),
        (("--policy", "sync-flusher-stall"), "--policy takes PROBLEM=POLICY"),
        (("--kernel", "garbage"), "malformed kernel release 'garbage'"),
    ],
)
def test_bad_usage_is_one_line_exit_2(args, needle):
    r = run_cli("replay", str(SAMPLES / "sync-xfs-v6.dat"), *args)
    assert r.code == 2
    assert needle in one_line_error(r)


def test_a_given_kernel_is_named_beside_the_captures():
    r = run_cli("replay", str(SAMPLES / "sync-xfs-v6.dat"), "--kernel", "3.10.0", "--problem", "sync-flusher-stall")
    assert r.code == 0, r.err
    assert "kernel 6.18.44-fc-v669; replayed as kernel 3.10.0 (--kernel)" in r.out
    header = next(line for line in r.out.splitlines() if line.startswith("metric")).split()
    assert "wait-per-inode*" in header and "for-sync" in header  # piped: * marks the given kernel's policy


def test_a_capture_without_dirtying_is_one_line_exit_2():
    r = run_cli("replay", str(SAMPLES / "blk-ext4-fsync.bin"))
    assert r.code == 2
    assert "no page-dirtying events" in one_line_error(r)


@pytest.mark.parametrize("args, message", [
    (["--workload", "nope"], "unknown workload 'nope'"),
    (["--workload", "fio-snapshot:rw=read"], "rw='read' is not one of write, randwrite"),
    (["--workload", "fio-snapshot:jobs=two"], "jobs='two' is not a whole number"),
    (["--workload", "fio-snapshot:jobs"], "'jobs' is not key=value"),
    (["--workload", "fio-snapshot:colour=red"], "unknown parameter 'colour'"),
    (["--workload", "fsync-jobs:write_rate=0"], "write_rate='0' must be more than 0"),
    (["--workload", "dbench:runtime=1e9"], "the limit is 200,000,000"),
    (["--workload", "untar:files=300000000"], "the limit is 200,000,000"),
    (["--workload", "untar:median_size=1G"], "median_size=1073741824 must be below the mean file size"),
    (["--workload", "untar:nodesize=5k"], "nodesize=5120 must be a power of two"),
    (["--workload", "untar:metadata_free=64k"], "cannot hold one file's reservations"),
    (["--workload", "untar:hz=fast"], "hz='fast' is not a whole number"),
    (["--workload", "untar:decompress_rate=0"], "decompress_rate='0' must be more than 0"),
    ([], "nothing to replay"),
])
def test_malformed_workload_description_is_one_line_exit_2(args, message):
    r = run_cli("replay", *args)
    assert r.code == 2
    assert message in one_line_error(r)


def test_synthetic_workload_json_and_listing():
    r = run_cli("replay", "--workload", "fsync-jobs:jobs=2,total=1G", "-p", "btrfs-full-fsync-fallback", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["workload"]["params"]["workload"] == "fsync-jobs" and doc["workload"]["params"]["jobs"] == "2"
    assert doc["workload"]["dirtying_events"] == 2 * 8192
    assert {x["policy"] for x in doc["results"]} == {"full-sync-on-release", "fast-fsync"}
    listing = run_cli("replay", "--list-workloads", "--json")
    assert listing.code == 0
    assert {"fio-snapshot", "fsmark-sync", "dbench", "fsync-jobs", "untar"} <= set(json.loads(listing.out))


def _report_text(dat: str, tmp_path, *flags: str) -> str:
    """`trace-cmd report` of a sample (`-R`: every field as a number, no print format)."""
    need_trace_cmd()
    text = tmp_path / (dat + "".join(flags) + ".txt")
    with text.open("w") as f:
        assert subprocess.run(["trace-cmd", "report", *flags, "-i", str(SAMPLES / dat)], stdout=f, stderr=subprocess.DEVNULL).returncode == 0
    return str(text)


def test_a_text_capture_takes_the_kernel_it_is_given(tmp_path):
    """A text has no uname. What the replay infers from the kernel (from 3.9 a writer
    waits on page writeback only for a device that needs stable pages) then follows
    --kernel, as from the trace.dat's own release, and the replay says so."""
    dat = "fio-rewrite-stable-ext4-run1-v7-zstd.dat"
    text = _report_text(dat, tmp_path)
    r = run_cli("replay", text, "--problem", "stable-page-wait", "--kernel", "6.18.44", "--json")
    assert r.code == 0, r.err
    given, recorded = json.loads(r.out), replay(dat, "--problem", "stable-page-wait")
    assert given["workload"]["stable_writes"] is recorded["workload"]["stable_writes"] is True
    assert "the capture does not record its kernel: taken as 6.18.44 (--kernel)" in given["workload"]["assumptions"]
    for doc in (given, recorded):
        assert own(doc, "stable-page-wait")["write_stall_count"] == 820
    unknown = run_cli("replay", text, "--problem", "stable-page-wait", "--json")
    assert json.loads(unknown.out)["workload"]["stable_writes"] is None


def test_unnamed_flush_states_of_a_raw_text_are_still_delalloc_steps(tmp_path):
    """`trace-cmd report -R` prints btrfs_flush_space's state as a number (state=5, not
    FLUSH_DELALLOC): the replay takes the same 125 delalloc steps as from the trace.dat
    and flushes as much under each policy."""
    dat = "lab-btrfs-delalloc-overflush-revert-run1-v7-zstd.dat"
    text = _report_text(dat, tmp_path, "-R")
    args = ("--problem", "btrfs-delalloc-overflush", "--kernel", "6.1.0")
    raw, recorded = replay(text, *args), replay(dat, *args)
    assert raw["workload"]["flush_requests"] == recorded["workload"]["flush_requests"]
    rows = [{r["policy"]: r["metrics"] for r in doc["results"]} for doc in (raw, recorded)]
    assert rows[0].keys() == rows[1].keys() == {"flush-inodes", "flush-pages"}
    for policy, metrics in rows[1].items():
        assert metrics["flush_space_count"] == rows[0][policy]["flush_space_count"] == 125
        assert rows[0][policy]["delalloc_flushed_bytes"] == pytest.approx(metrics["delalloc_flushed_bytes"], rel=0.01)


def test_unnamed_writeback_reasons_of_a_raw_text_still_show_the_sync(tmp_path):
    """A raw text prints the flusher's work items as `writeback_start: ... sync_mode=0 ...
    reason=2`, with no format naming 2 "sync": the sync's WB_SYNC_NONE pass (which the
    sync waits for before its own) is still found, and the sync writes the same 7,438
    inodes as replayed from the trace.dat."""
    dat = "lab-sync-flusher-stall-stock-run1-v7-zstd.dat"
    text = _report_text(dat, tmp_path, "-R")
    r = run_cli("sql", text, "SELECT DISTINCT reason, reason_name FROM writeback_works", "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out) == [{"reason": 2, "reason_name": "sync"}]
    args = ("--problem", "sync-flusher-stall", "--kernel", "6.1.192-stock")
    raw, recorded = replay(text, *args), replay(dat, *args)
    rows = [{r["policy"]: r["metrics"] for r in doc["results"]} for doc in (raw, recorded)]
    for policy, metrics in rows[1].items():
        assert rows[0][policy]["inodes_written_during_sync"] == metrics["inodes_written_during_sync"] == 7438
        assert rows[0][policy]["sync_seconds"] == pytest.approx(metrics["sync_seconds"], rel=0.01)


@pytest.mark.parametrize("text", ["tracefs-ext4.trace.txt", "tracefs-ext4.report.txt"])
def test_a_text_capture_replays_as_its_trace_dat(text):
    # The block events print their request fields by position ("7,0 RM 4096 () 33928 + 8
    # 0x2,0,4 [dd]"); read as the trace.dat's fields, they give the same fitted device
    # (to the text's microsecond timestamps), not an assumed one.
    doc, dat = replay(text, "--problem", "sync-flusher-stall"), replay("tracefs-ext4.dat", "--problem", "sync-flusher-stall")
    assert doc["workload"]["dirtying_events"] == dat["workload"]["dirtying_events"]
    device, dat_device = doc["workload"]["device"], dat["workload"]["device"]
    assert device["name"] == "capture" and device["write_requests"] == dat_device["write_requests"] == 36
    assert device["bandwidth_mb_s"] == pytest.approx(dat_device["bandwidth_mb_s"], rel=1e-3)
    assert not any("SATA SSD" in a for a in doc["workload"]["assumptions"])
    assert doc["observed"]["sync-flusher-stall"]["sync_seconds"] == pytest.approx(0.025275, abs=1e-6)
