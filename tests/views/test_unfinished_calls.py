"""A sync whose return the capture does not show (sample_traces capture 46): still running
when the recording stopped, or returned while the kernel dropped events. Measured from
outside the trace, the first took 4.011 s and the second 7.364 s."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import SAMPLES, need_trace_cmd
from tests.helpers import advisor as run_cli

MANIFEST = {e["file"]: e for e in json.loads((SAMPLES / "manifest.json").read_text())}
RUNNING = "sync-running-xfs-v7-zstd.dat"
LOST = "sync-lost-xfs-v7-zstd.dat"


def sql(sample: str, query: str) -> list[dict]:
    r = run_cli("sql", "--format", "json", str(SAMPLES / sample), query)
    assert r.code == 0, r.err
    return json.loads(r.out)


def analyze(sample: str) -> dict:
    r = run_cli("analyze", str(SAMPLES / sample), "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def finding(doc: dict, rule: str) -> dict:
    return next(f for f in doc["findings"] if f["rule"] == rule)


def test_a_sync_still_running_counts_to_the_capture_s_last_event():
    (call,) = sql(RUNNING, "SELECT * FROM calls_seen('sync_ops')")
    (last,) = sql(RUNNING, "SELECT CAST(value AS BIGINT) AS ts FROM trace_info WHERE key = 'last_ts'")
    (enter,) = sql(RUNNING, "SELECT ts FROM raw.sys_enter_sync")
    assert not call["complete"] and call["running"] and not call["unresolved"]
    assert call["start_ts"] == enter["ts"] and call["until_ts"] == last["ts"]
    (longest,) = sql(RUNNING, "SELECT * FROM longest_call('sync_ops')")
    assert longest["until_ts"] == last["ts"]


def test_analyze_measures_a_running_sync_as_a_lower_bound():
    f = finding(analyze(RUNNING), "sync-flusher-stall")
    m = f["metrics"]
    (call,) = sql(RUNNING, "SELECT (until_ts - start_ts) / 1e9 AS s FROM calls_seen('sync_ops')")
    assert m["sync_count"] == 1 and m["still_running"] == 1 and m["unresolved_sync_count"] == 0
    assert m["sync_seconds"] == call["s"]
    # A lower bound: the sync took longer than the capture shows of it.
    assert 1.0 < m["sync_seconds"] < MANIFEST[RUNNING]["measurements"]["sync_wall_seconds"]
    assert m["inodes_written_during_sync"] > 0
    assert "had not returned when the capture ended" in f["message"]
    assert "No sync(2)" not in f["message"]
    (calls,) = [e for e in f["evidence"] if e["title"].startswith("sync calls")]
    assert calls["rows"][0][calls["columns"].index("ended")] == "still running at the capture's end"


def test_a_sync_whose_return_was_lost_is_unknown_not_absent():
    (call,) = sql(LOST, "SELECT * FROM calls_seen('sync_ops')")
    assert not call["complete"] and call["unresolved"] and not call["running"] and call["until_ts"] is None
    # The parser paired an exit with it; the view leaves it open: events were lost between.
    (paired,) = sql(LOST, "SELECT end_ts - start_ts AS ns FROM raw.syscall_spans WHERE syscall = 'sync'")
    assert paired["ns"] is not None
    (gaps,) = sql(LOST, f"SELECT count(*) AS n FROM lost_events WHERE ts > {call['start_ts']} AND ts <= {call['start_ts'] + paired['ns']}")
    assert gaps["n"] > 0
    doc = analyze(LOST)
    f = finding(doc, "sync-flusher-stall")
    m = f["metrics"]
    assert f["verdict"] == "insufficient-data"
    assert m["sync_count"] == 1 and m["unresolved_sync_count"] == 1 and m["sync_seconds"] is None
    assert "The return of 1 of the sync calls is unknown" in f["message"]


def test_lost_events_show_what_the_page_counts_leave_out():
    c = analyze(LOST)["capture"]
    e = MANIFEST[LOST]
    assert c["lost_events"] == e["lost_events"]  # what trace-cmd report prints as [LOST n EVENTS]
    assert c["kernel_overwritten"] == e["cpu_stats_overrun"]
    assert c["lost_gaps_uncounted"] > 0
    text = run_cli("analyze", str(SAMPLES / LOST)).out
    assert f"{c['lost_gaps_uncounted']:,} more gaps of unknown size" in text
    assert f"the kernel counted {e['cpu_stats_overrun']:,} overwritten" in text


def test_a_whole_capture_adds_nothing_to_its_lost_events():
    c = analyze("sync-xfs-v6.dat")["capture"]
    assert c["lost_events"] == c["lost_gaps_uncounted"] == c["kernel_overwritten"] == 0


def test_replay_holds_a_running_sync_as_a_lower_bound():
    """No error is computed against the time a sync had run when the capture ended, but a
    prediction shorter than that is said to miss."""
    r = run_cli("replay", str(SAMPLES / RUNNING), "--json", "-p", "sync-flusher-stall")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert "sync_seconds" not in doc["observed"]["sync-flusher-stall"]
    own = next(x for x in doc["results"] if x["own_kernel"])
    assert not own.get("own_kernel_error")
    (f,) = [x for x in json.loads(run_cli("analyze", str(SAMPLES / RUNNING), "--json").out)["findings"]
            if x["rule"] == "sync-flusher-stall"]
    bound = f["metrics"]["sync_seconds"]
    assert any("had not returned when it ended" in w and f"{bound:.3f} s" in w for w in doc["warnings"])
    shorter = own["metrics"]["sync_seconds"] < bound
    assert shorter == any("shorter than the" in w for w in doc["warnings"])


def test_a_snapshot_cut_short_by_the_recording_s_end(tmp_path):
    """`trace-cmd split` keeps the first second of the 2.84 s snapshot of capture 18, as if
    the recording had stopped there: the snapshot is measured as still running."""
    need_trace_cmd()
    whole = "snapshot-seq-btrfs-run1-v7-zstd.dat"
    (snap,) = sql(whole, "SELECT start_ts, dur_ns FROM snapshot_ops")
    cut = tmp_path / "cut.dat"
    subprocess.run(["trace-cmd", "split", "-i", str(SAMPLES / whole), "-o", str(cut), "0", f"{snap['start_ts'] / 1e9 + 1.0:.6f}"],
                   check=True, capture_output=True)
    (part,) = tmp_path.glob("cut.dat*")
    r = run_cli("analyze", str(part), "--json")
    assert r.code == 0, r.err
    f = finding(json.loads(r.out), "btrfs-snapshot-livelock")
    m = f["metrics"]
    last = json.loads(run_cli("sql", "--format", "json", str(part), "SELECT CAST(value AS BIGINT) AS ts FROM trace_info WHERE key = 'last_ts'").out)[0]["ts"]
    assert m["snapshot_count"] == 1 and m["still_running"] == 1
    assert m["snapshot_seconds"] == (last - snap["start_ts"]) / 1e9
    assert 0.9 < m["snapshot_seconds"] < snap["dur_ns"] / 1e9
    assert m["dirtied_during_snapshot_bytes"] > 0
    assert "That snapshot had not returned when the capture ended" in f["message"]
