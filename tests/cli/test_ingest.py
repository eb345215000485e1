"""`advisor ingest`: summary, JSON, cache."""

from __future__ import annotations

import json

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor, one_line_error


def test_json_summary_and_cache(tmp_path):
    env = {"WRITEBACK_ADVISOR_CACHE": str(tmp_path / "cache")}
    m = next(m for m in samples() if m["file"] == "sync-xfs-v6.dat")
    first = advisor("ingest", str(SAMPLES / m["file"]), "--json", env=env)
    assert first.code == 0, first.err
    doc = json.loads(first.out)
    assert doc["cached"] is False
    assert doc["events"] == m["event_count"]
    assert doc["kernel_release"] == m["kernel"]
    assert doc["lost_events"] == 0 and doc["damaged"] is False
    assert sum(doc["events_by_type"].values()) == m["event_count"]
    again = json.loads(advisor("ingest", str(SAMPLES / m["file"]), "--json", env=env).out)
    assert again["cached"] is True and again["store"] == doc["store"]
    assert again["events_by_type"] == doc["events_by_type"]
    forced = json.loads(advisor("ingest", str(SAMPLES / m["file"]), "--json", "--force", env=env).out)
    assert forced["cached"] is False


def test_human_summary_on_stdout(tmp_path):
    r = advisor("ingest", str(SAMPLES / "lost-events-v7-zstd.dat"), "-o", str(tmp_path / "s.duckdb"))
    assert r.code == 0 and r.err == ""
    assert "6.18.44" in r.out and "data loss" in r.out and "53,347" in r.out


def test_output_refuses_to_overwrite(tmp_path):
    out = tmp_path / "s.duckdb"
    assert advisor("ingest", str(SAMPLES / "tracefs-ext4.dat"), "-o", str(out)).code == 0
    line = one_line_error(advisor("ingest", str(SAMPLES / "tracefs-ext4.dat"), "-o", str(out)))
    assert "exists" in line
    assert advisor("ingest", str(SAMPLES / "tracefs-ext4.dat"), "-o", str(out), "--force").code == 0


def test_one_capture_per_store(tmp_path):
    line = one_line_error(advisor("ingest", str(SAMPLES / "tracefs-ext4.dat"), str(SAMPLES / "sync-xfs-v6.dat"), "-o", str(tmp_path / "x.duckdb")))
    assert "one store holds one ftrace capture" in line


def test_every_ftrace_sample_ingests(store_of):
    from advisor.store.cache import load_result

    for m in samples():
        if m["kind"] not in ("trace.dat", "tracefs-text", "trace_pipe-text", "report-text", "report-raw-text"):
            continue
        r = load_result([SAMPLES / m["file"]], store_of(m["file"]), "")
        assert r.events == m["event_count"], m["file"]
        assert r.damaged is False


def test_one_cpu_file_names_every_cpu_file_read():
    """blktrace's reader takes every NAME.blktrace.N when given one of them (as blkparse
    -i NAME does): the summary says so rather than listing only the file given."""
    r = advisor("ingest", str(SAMPLES / "blk-ext4-fsync.blktrace.0"), "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["blktrace_cpu_files"] == [str(SAMPLES / f"blk-ext4-fsync.blktrace.{n}") for n in (0, 1)]
    text = advisor("ingest", str(SAMPLES / "blk-ext4-fsync.blktrace.0")).out
    assert "blk-ext4-fsync.blktrace.1" in text
