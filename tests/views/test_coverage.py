"""A capture read from overwritten ring buffers begins at a different time on each CPU
(views.coverage): analyze, report and replay say from when every CPU is recorded."""

from __future__ import annotations

import json
import re
import subprocess

from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach
from advisor.views.coverage import cpu_coverage
from tests.conftest import SAMPLES, need_trace_cmd
from tests.helpers import advisor

# tracefs' default 1408 KB buffers in overwrite mode, read after the workload: 859,302
# events overwritten, CPU 0's buffer begins at 4756.611 s and CPU 1's at 4758.075 s.
EXTRACT = "fsync-memcg-btrfs-run3-tracefs.dat"
TEXT = "fsync-memcg-btrfs-run3-tracefs.trace.txt"


def _report_cpu(cpu: int) -> tuple[int, int]:
    """(events dropped before the CPU's first page, its first event's ns) as trace-cmd prints them."""
    need_trace_cmd()
    out = subprocess.run(["trace-cmd", "report", "-t", "--cpu", str(cpu), str(SAMPLES / EXTRACT)],
                         capture_output=True, text=True, check=True).stdout
    dropped = int(re.search(rf"CPU:{cpu} \[(\d+) EVENTS DROPPED\]", out).group(1))
    sec, ns = re.search(r"\s(\d+)\.(\d{9}):", out).groups()
    return dropped, int(sec) * 10**9 + int(ns)


def test_the_extract_begins_late_on_cpu_1_as_trace_cmd_shows(store_of):
    dropped, first = _report_cpu(1)
    _, cpu0_first = _report_cpu(0)
    with open_store(store_of(EXTRACT)) as con:
        c = cpu_coverage(con)
    assert c is not None and c.certain
    assert [(x.cpu, x.first_ts, x.lost) for x in c.late] == [(1, first, dropped)]
    assert c.first_ts == cpu0_first and c.complete_from_ts == first
    text = c.describe()
    assert "CPU 1 at +1.463 s (636,158 events dropped before it)" in text
    assert "every CPU is recorded for the last 0.593 s of 2.056 s" in text


def test_the_text_gives_only_a_total_and_says_may(store_of):
    """`cat trace` has the overwritten total in its header, no per-CPU markers: the
    late CPU may have lost events, or may have been idle."""
    with open_store(store_of(TEXT)) as con:
        c = cpu_coverage(con)
    assert c is not None and not c.certain
    assert [(x.cpu, x.lost) for x in c.late] == [(1, None)]
    assert c.complete_from_ts == 4758074885000  # the text's microseconds
    assert "may be missing" in c.describe()


def test_captures_without_overwritten_buffers_say_nothing(store_of):
    for name in ("fio-ext4-v7-zstd.dat", "fsync-memcg-btrfs-run1-v7-zstd.dat"):
        with open_store(store_of(name)) as con:
            assert cpu_coverage(con) is None, name


def test_analyze_and_report_name_the_late_cpu(tmp_path):
    r = advisor("analyze", "--json", str(SAMPLES / EXTRACT))
    assert r.code == 0, r.err
    cov = json.loads(r.out)["capture"]["cpu_coverage"]
    assert cov["late_cpus"] == [{"cpu": 1, "first_ts": 4758074885397, "lost_before": 636158}]
    assert cov["complete_from_ts"] == 4758074885397
    r = advisor("analyze", str(SAMPLES / EXTRACT))
    assert r.code == 0 and "coverage" in r.out and "CPU 1 at +1.463 s" in r.out
    page = tmp_path / "r.html"
    r = advisor("report", str(SAMPLES / EXTRACT), "-o", str(page))
    assert r.code == 0, r.err
    assert "CPU 1 at +1.463 s" in page.read_text()


def test_replay_says_the_workload_is_partial_at_first(store_of):
    with open_store(store_of(EXTRACT)) as con:
        w = from_store(con, EXTRACT, views=attach(con))
    assert w.complete_from_ts == 4758074885397
    assert any(a.startswith("a partial workload at first") for a in w.assumptions)
    # Its fsync p99 and max are off by more than 25%: the warning names the missing CPU events.
    r = advisor("replay", "--json", str(SAMPLES / EXTRACT), "--problem", "btrfs-full-fsync-fallback")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["workload"]["complete_from_ts"] == 4758074885397
    assert any("missing some CPUs' events before +1.463 s" in x for x in doc["warnings"])
    with open_store(store_of("fsync-memcg-btrfs-run1-v7-zstd.dat")) as con:
        w = from_store(con, "run1", views=attach(con))
    assert w.complete_from_ts is None and not any(a.startswith("a partial workload") for a in w.assumptions)


def _tracefs_text(path, per_cpu: dict[int, list[float]], written: int) -> None:
    """A tracefs `trace` file: its header's overwritten total, writeback_dirty_folio lines."""
    lines = [(t, cpu) for cpu, times in per_cpu.items() for t in times]
    head = ["# tracer: nop", "#", f"# entries-in-buffer/entries-written: {len(lines)}/{written}   #P:{len(per_cpu)}", "#",
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", "#              | |         |   |||||     |         |"]
    body = [f"             dd-{100 + cpu}     [{cpu:03d}] .....  {t:.6f}: writeback_dirty_folio: bdi 7:0: ino=12 index={i}"
            for i, (t, cpu) in enumerate(sorted(lines))]
    path.write_text("\n".join(head + body) + "\n")


def test_a_text_cpu_with_few_events_was_idle_not_overwritten(tmp_path):
    """Overwritten buffers are full: CPU 1, beginning late with as many events as CPU 0,
    lost its start; CPU 2, beginning late with 3 events, was idle."""
    from advisor.store import ingest_trace

    trace = tmp_path / "trace.txt"
    _tracefs_text(trace, {0: [100 + i * 0.01 for i in range(200)], 1: [101 + i * 0.005 for i in range(190)],
                          2: [101.5, 101.6, 101.7]}, written=5000)
    store = tmp_path / "s.duckdb"
    ingest_trace(trace, store)
    with open_store(store) as con:
        c = cpu_coverage(con)
    assert c is not None and not c.certain
    # CPU 0 also prints 101.000000, first: CPU 1's line of that microsecond is stored 1 ns later.
    assert [x.cpu for x in c.late] == [1] and c.complete_from_ts == 101_000_000_001
    _tracefs_text(trace, {0: [100 + i * 0.01 for i in range(200)], 2: [101.5, 101.6, 101.7]}, written=5000)
    ingest_trace(trace, tmp_path / "idle.duckdb")
    with open_store(tmp_path / "idle.duckdb") as con:
        assert cpu_coverage(con) is None


def test_a_report_of_one_cpu_says_the_other_has_no_event(tmp_path):
    """`trace-cmd report --cpu 0` prints CPU 0's events under the file's `cpus=2` line:
    analyze says CPU 1 has none (idle, offline or left out), which the whole report does not."""
    need_trace_cmd()
    one = tmp_path / "cpu0.txt"
    with one.open("w") as f:
        subprocess.run(["trace-cmd", "report", "--cpu", "0", str(SAMPLES / "tracefs-ext4.dat")], stdout=f, check=True)
    r = advisor("analyze", str(one), "--json")
    assert r.code in (0, 1), r.err
    assert json.loads(r.out)["capture"]["silent_cpus"] == {"cpus": 2, "silent": [1]}
    text = advisor("analyze", str(one)).out
    assert "no event from CPU 1 of 2: idle, offline, or left out of the capture" in text
    whole = advisor("analyze", str(SAMPLES / "tracefs-ext4.report.txt"), "--json")
    assert json.loads(whole.out)["capture"]["silent_cpus"] is None


def test_silent_cpus_are_named_in_ranges():
    from advisor.views.coverage import describe_silent

    assert describe_silent({"cpus": 64, "silent": [1, 3, 4, 5, 9, *range(11, 64)]}).startswith(
        "no event from CPUs 1, 3-5, 9, 11-63 of 64:")
