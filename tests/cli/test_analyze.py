"""`advisor analyze` on the real sample captures: verdicts that follow from the
capture's kernel (6.18, every fix present) and from what happened, metrics that
agree with what was measured outside the trace, the JSON contract, exit codes."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli, one_line_error

MEAS = SAMPLES / "measurements"


def analyze(*args) -> tuple[int, dict | None, str]:
    r = run_cli("analyze", *args, "--json")
    return r.code, (json.loads(r.out) if r.out.strip() else None), r.err


def findings(*args) -> dict:
    code, doc, err = analyze(*args)
    assert code == 0, err
    return {f["rule"]: f for f in doc["findings"]}


@pytest.mark.parametrize(
    "sample, expected",
    [
        ("sync-xfs-v6.dat", {"sync-flusher-stall": "not-affected", "stable-page-wait": "insufficient-data"}),
        # no sync syscalls recorded, but the flusher's work items were, and none was a sync's
        ("snapshot-btrfs-v7-none.dat", {"btrfs-snapshot-livelock": "not-affected", "sync-flusher-stall": "not-affected",
                                        "btrfs-full-fsync-fallback": "insufficient-data"}),
        ("stable-pages-ext4-v7-zstd.dat", {"stable-page-wait": "signature-without-known-bug"}),
        # one delalloc flush step, measured against the device's data writes (no extent_writepage recorded)
        ("dbench-btrfs-v7-zstd.dat", {"btrfs-full-fsync-fallback": "not-affected", "btrfs-delalloc-overflush": "not-affected",
                                      "btrfs-snapshot-livelock": "insufficient-data"}),
        # ext4: the btrfs rules do not apply
        ("fio-ext4-v7-zstd.dat", {"stable-page-wait": "not-affected", "btrfs-snapshot-livelock": "not-applicable",
                                  "btrfs-full-fsync-fallback": "not-applicable", "btrfs-delalloc-overflush": "not-applicable"}),
        # 6.18: space reclaim flushed delalloc 154 times, page-bounded (0.26x what it asked)
        ("untar-btrfs-v7-zstd.dat", {"btrfs-delalloc-overflush": "not-affected", "sync-flusher-stall": "not-affected",
                                     "btrfs-full-fsync-fallback": "insufficient-data"}),
        # 6.1 (VM): fsyncs overlapping kswapd reclaim with a p99/p50 over 4x, on a kernel that has the fix
        ("fsync-reclaim-btrfs-v7-zstd.dat", {"btrfs-full-fsync-fallback": "signature-without-known-bug",
                                             "btrfs-delalloc-overflush": "not-affected"}),
    ],
)
def test_sample_verdicts_on_their_own_kernel(sample, expected):
    got = findings(str(SAMPLES / sample))
    assert set(got) == {"btrfs-snapshot-livelock", "sync-flusher-stall", "stable-page-wait", "btrfs-full-fsync-fallback", "btrfs-delalloc-overflush"}
    for rule, verdict in expected.items():
        assert got[rule]["verdict"] == verdict, got[rule]["message"]


@pytest.mark.parametrize(
    "sample, rule, kernel, verdict",
    [
        ("sync-xfs-v6.dat", "sync-flusher-stall", "3.10.108", "at-risk"),  # a sync through the flusher, 0.11 s: no stall yet
        ("snapshot-btrfs-v7-none.dat", "btrfs-snapshot-livelock", "4.20.7", "at-risk"),  # snapshot under a writer, short
        ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "3.8.13", "affected"),
        ("dbench-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "5.8.18", "at-risk"),  # fsync-heavy, no reclaim
        ("snapshot-btrfs-v7-none.dat", "btrfs-snapshot-livelock", "4.19.0-26-amd64", "at-risk"),  # Debian hides the point
        ("untar-btrfs-v7-zstd.dat", "btrfs-delalloc-overflush", "5.10.7", "at-risk"),  # reclaim flushes delalloc, by page budget
        ("fsync-reclaim-btrfs-v7-zstd.dat", "btrfs-full-fsync-fallback", "5.8.18", "affected"),  # the signature, unfixed
    ],
)
def test_same_captures_judged_against_an_affected_kernel(sample, rule, kernel, verdict):
    f = findings(str(SAMPLES / sample), "--kernel", kernel, "--rule", rule)[rule]
    assert f["verdict"] == verdict, f["message"]
    assert f["recommendation"]["upgrade"]


def within(measured: float, outside: float, tolerance: float = 0.05) -> bool:
    return abs(measured - outside) <= tolerance * outside


def test_sync_seconds_agree_with_time_sync():
    f = findings(str(SAMPLES / "sync-xfs-v6.dat"), "-r", "sync-flusher-stall")["sync-flusher-stall"]
    outside = float((MEAS / "sync-xfs-v6.sync-time.txt").read_text())  # bash `time sync`, real
    assert within(f["metrics"]["sync_seconds"], outside), (f["metrics"]["sync_seconds"], outside)
    assert f["metrics"]["inodes_written_during_sync"] > 4000


def test_snapshot_seconds_agree_with_the_timed_ioctl():
    f = findings(str(SAMPLES / "snapshot-btrfs-v7-none.dat"), "-r", "btrfs-snapshot-livelock")["btrfs-snapshot-livelock"]
    outside = json.loads((MEAS / "snapshot-btrfs-v7-none.snapshot-ioctl.json").read_text())["ioctl_ns"] / 1e9
    assert within(f["metrics"]["snapshot_seconds"], outside), (f["metrics"]["snapshot_seconds"], outside)
    assert f["metrics"]["written_during_snapshot_bytes"] > 0


def test_write_stall_max_agrees_with_fio():
    f = findings(str(SAMPLES / "stable-pages-ext4-v7-zstd.dat"), "-r", "stable-page-wait")["stable-page-wait"]
    fio = json.loads((MEAS / "stable-pages-ext4-v7-zstd.fio.json").read_text())["jobs"][0]["write"]
    assert within(f["metrics"]["write_stall_max_ms"], fio["clat_ns"]["max"] / 1e6)
    assert f["metrics"]["write_count"] == fio["total_ios"]


def test_fsync_latency_agrees_with_dbench():
    f = findings(str(SAMPLES / "dbench-btrfs-v7-zstd.dat"), "-r", "btrfs-full-fsync-fallback")["btrfs-full-fsync-fallback"]
    line = next(l for l in (MEAS / "dbench-btrfs-v7-zstd.dbench.txt").read_text().splitlines() if l.strip().startswith("Flush"))
    _, count, avg_ms, max_ms = line.split()
    assert f["metrics"]["fsync_count"] == int(count)
    assert within(f["metrics"]["fsync_mean_ms"], float(avg_ms))
    assert within(f["metrics"]["fsync_max_ms"], float(max_ms))


def test_untar_delalloc_pattern_and_data_written_agree_with_the_tarball():
    """Every data page the untar dirtied (the tarball's file sizes rounded up to 4 KiB, counted
    outside the trace) was written back once during the capture (it ends after sync)."""
    f = findings(str(SAMPLES / "untar-btrfs-v7-zstd.dat"), "-r", "btrfs-delalloc-overflush")["btrfs-delalloc-overflush"]
    m = f["metrics"]
    tarball = json.loads((MEAS / "untar-btrfs-v7-zstd.tarball.json").read_text())
    assert within(m["data_written_bytes"], tarball["file_pages_4k"] * 4096), (m["data_written_bytes"], tarball)
    # the pattern was there: reclaim flushed delalloc, most of the data writeback fell in its steps
    assert m["flush_space_count"] >= 100 and m["overflush_ratio"] < 1
    # 6.18 budgets reclaim's flush in pages: no page of it went out as a whole-inode flush
    assert m["whole_inode_flush_share"] == 0 and m["whole_inode_flushed_bytes"] == 0
    assert 0 < m["delalloc_flushed_bytes"] <= m["data_written_bytes"]
    assert "has the pattern this bug needs" in f["message"]


def test_untar_block_writes_agree_with_the_loop_device():
    """The capture's write requests carry the bytes /sys/block/loop0/stat counted (read before
    and after the traced workload): data, inline files and both metadata copies."""
    r = run_cli("sql", str(SAMPLES / "untar-btrfs-v7-zstd.dat"), "--format", "csv",
                stdin="SELECT sum(nr_sector) * 512 FROM block_rq_issue WHERE rwbs LIKE '%W%'")
    assert r.code == 0, r.err
    traced = int(r.out.splitlines()[1])
    before, after = ((MEAS / f"untar-btrfs-v7-zstd.{w}.txt").read_text().splitlines()[0].split() for w in ("before", "after"))
    outside = (int(after[7]) - int(before[7])) * 512  # "loop_stat" then the stat fields: the 7th is sectors written
    assert within(traced, outside), (traced, outside)


def test_fsync_latency_under_reclaim_agrees_with_fio():
    f = findings(str(SAMPLES / "fsync-reclaim-btrfs-v7-zstd.dat"), "-r", "btrfs-full-fsync-fallback")["btrfs-full-fsync-fallback"]
    m = f["metrics"]
    sync = json.loads((MEAS / "fsync-reclaim-btrfs-v7-zstd.fio.json").read_text())["jobs"][0]["sync"]
    assert m["fsync_count"] == sync["total_ios"]
    assert within(m["fsync_p50_ms"], sync["lat_ns"]["percentile"]["50.000000"] / 1e6), (m["fsync_p50_ms"], sync["lat_ns"])
    assert within(m["fsync_mean_ms"], sync["lat_ns"]["mean"] / 1e6), (m["fsync_mean_ms"], sync["lat_ns"]["mean"])
    # reclaim really ran (kswapd scanned pages, by /proc/vmstat) and overlapped fsyncs
    vmstat = dict(l.split() for l in (MEAS / "fsync-reclaim-btrfs-v7-zstd.vmstat-after.txt").read_text().splitlines())
    assert int(vmstat["pgscan_kswapd"]) > 0
    assert m["reclaim_events"] > 0 and m["fsyncs_during_reclaim"] >= 1


def test_json_contract_and_insufficient_data_names_the_command():
    code, doc, _ = analyze(str(SAMPLES / "untar-btrfs-v7-zstd.dat"))
    assert set(doc) >= {"kernel", "capture", "findings"}
    assert doc["kernel"]["release"] == "6.18.44-fc-v669"
    assert doc["capture"]["lost_events"] == 0 and doc["capture"]["span_seconds"] > 5
    snap = next(f for f in doc["findings"] if f["rule"] == "btrfs-snapshot-livelock")
    assert snap["verdict"] == "insufficient-data"
    assert "syscalls:sys_enter_ioctl" in snap["capture_command"] and "syscalls:sys_exit_ioctl" in snap["capture_command"]
    assert {u["metric"] for u in snap["unmeasured"]} >= {"snapshot_seconds", "late_written_fraction"}
    for f in doc["findings"]:
        assert set(f) >= {"rule", "verdict", "metrics", "unmeasured", "measured_from", "evidence", "recommendation"}


def test_a_btrfs_rule_on_an_ext4_capture_says_not_applicable():
    f = findings(str(SAMPLES / "fio-ext4-v7-zstd.dat"), "-r", "btrfs-snapshot-livelock")["btrfs-snapshot-livelock"]
    assert f["verdict"] == "not-applicable"
    assert "btrfs" in f["message"] and "ext4" in f["message"]
    assert f["capture_command"] is None and f["unmeasured"] == []


def test_snapshot_dirtying_counts_data_pages_not_btrfs_metadata():
    """The snapshot ioctl dirties btree pages itself (inode 1, btrfs's metadata): 32 of
    them in this run's window. Only the writers' data pages count."""
    name = str(SAMPLES / "snapshot-rand4-btrfs-run2-v7-zstd.dat")
    window = ("WITH s AS (SELECT * FROM snapshot_ops WHERE complete ORDER BY dur_ns DESC LIMIT 1) "
              "SELECT count(*) FILTER (WHERE d.ino <> 1) * 4096, count(*) FILTER (WHERE d.ino = 1) "
              "FROM writeback_dirty_folio d, s WHERE d.ts BETWEEN s.start_ts AND s.end_ts")
    r = run_cli("sql", "--format", "json", name, window)
    assert r.code == 0, r.err
    data_bytes, metadata_pages = json.loads(r.out)[0].values()
    assert metadata_pages > 0 and data_bytes > 0
    f = findings(name)["btrfs-snapshot-livelock"]
    assert f["metrics"]["dirtied_during_snapshot_bytes"] == data_bytes


def test_lost_events_are_reported():
    _, doc, _ = analyze(str(SAMPLES / "lost-events-v7-zstd.dat"))
    assert doc["capture"]["lost_events"] == 53347


@pytest.mark.parametrize("sample", ["fsync-memcg-btrfs-run3-tracefs.dat", "fsync-memcg-btrfs-run3-tracefs.trace.txt"])
def test_every_finding_of_a_lossy_capture_says_so(sample):
    """The tracefs buffer kept the last 2 s of a 25 s run: its header says 907,028 entries
    written, 47,726 still in the buffer; the .dat made from it stores the same 859,302 as
    page-header counts. Each finding's numbers cover only that part."""
    _, doc, _ = analyze(str(SAMPLES / sample))
    assert doc["capture"]["lost_events"] == 859_302
    judged = [f for f in doc["findings"] if f["verdict"] != "not-applicable"]
    assert judged and all("The capture lost 859,302 events" in f["message"] for f in judged)


def test_a_whole_capture_has_no_loss_caveat():
    _, doc, _ = analyze(str(SAMPLES / "fsync-memcg-btrfs-run1-v7-zstd.dat"))
    assert doc["capture"]["lost_events"] == 0
    assert not any("The capture lost" in f["message"] for f in doc["findings"])


def test_fail_on_sets_exit_code_1():
    args = (str(SAMPLES / "stable-pages-ext4-v7-zstd.dat"), "--kernel", "3.8.13", "-r", "stable-page-wait")
    assert analyze(*args, "--fail-on", "affected")[0] == 1
    assert analyze(*args, "--fail-on", "at-risk")[0] == 1
    assert analyze(str(SAMPLES / "stable-pages-ext4-v7-zstd.dat"), "--fail-on", "affected")[0] == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rule", "no-such-rule"], "unknown rule id 'no-such-rule'"),
        (["--kernel", "banana"], "malformed kernel release 'banana'"),
        (["--fail-on", "sometimes"], "--fail-on must be one of"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args, message):
    assert message in one_line_error(run_cli("analyze", str(SAMPLES / "sync-xfs-v6.dat"), *args))


def test_a_trace_with_no_events(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("cpus=2\n")
    assert "no events" in one_line_error(run_cli("analyze", str(empty)))


def test_a_sixth_rule_needs_no_engine_change(tmp_path):
    """Copy a rule under a new id, change its threshold: the engine runs it like the others."""
    src = (SAMPLES.parent / "advisor" / "problems" / "stable_page_wait" / "rule.toml").read_text()
    new = src.replace('id = "stable-page-wait"', 'id = "slow-stable-writes"').replace("value = 1.0\ntext = \"a buffered", "value = 50.0\ntext = \"a buffered")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "slow-stable-writes.toml").write_text(new)
    shutil.copy(SAMPLES.parent / "advisor" / "problems" / "sync_flusher_stall" / "rule.toml", rules / "sync-flusher-stall.toml")
    code, doc, err = analyze(str(SAMPLES / "stable-pages-ext4-v7-zstd.dat"), "--rules-dir", str(rules))
    assert code == 0, err
    got = {f["rule"]: f["verdict"] for f in doc["findings"]}
    # the directory adds the new rule and replaces the bundled sync-flusher-stall with its copy
    assert got["slow-stable-writes"] == "not-affected" and got["stable-page-wait"] == "signature-without-known-bug"
    assert set(got) == {"slow-stable-writes", "stable-page-wait", "sync-flusher-stall", "btrfs-snapshot-livelock",
                        "btrfs-full-fsync-fallback", "btrfs-delalloc-overflush"}


@pytest.mark.parametrize(
    "sample, rule, kernel, metric",
    [
        ("stable-pages-ext4-v7-zstd.dat", "stable-page-wait", "3.8.13", "write_max_ms"),
        ("snapshot-btrfs-v7-none.dat", "btrfs-snapshot-livelock", "4.19.0", "snapshot_seconds"),
    ],
)
def test_findings_quote_the_replay(sample, rule, kernel, metric):
    """An affected or at-risk finding says what the replay predicts before and after the
    fix, and the numbers are the replay's own."""
    f = findings(str(SAMPLES / sample), "--kernel", kernel, "--rule", rule)[rule]
    quote = f["replay"]
    assert quote["metric"] == metric and quote["own_kernel_fixed"] is False
    r = run_cli("replay", str(SAMPLES / sample), "--kernel", kernel, "--problem", rule, "--json")
    assert r.code == 0, r.err
    by_policy = {x["policy"]: x["metrics"][metric] for x in json.loads(r.out)["results"]}
    assert (quote["before"], quote["after"]) == (by_policy[quote["before_policy"]], by_policy[quote["after_policy"]])
    assert "Replayed on this capture's workload" in f["message"]


def test_not_affected_findings_carry_no_replay():
    f = findings(str(SAMPLES / "sync-xfs-v6.dat"), "--rule", "sync-flusher-stall")["sync-flusher-stall"]
    assert f["verdict"] == "not-affected" and "replay" not in f
