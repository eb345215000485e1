"""`advisor capture`: arguments checked before anything runs, every tracing
setting the recording may touch written back (only those that changed), and
no wait without a bound."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.capture.state import TracingState, buffer_kb, clock
from advisor.cli import capture_cmd
from tests.helpers import advisor, one_line_error


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "1e12"])
def test_duration_is_validated(value):
    line = one_line_error(advisor("capture", "--duration", value))
    assert "--duration must be" in line


@pytest.mark.parametrize("value", ["0", "63", "99999999999"])
def test_buffer_is_validated(value):
    line = one_line_error(advisor("capture", "--buffer-kb", value))
    assert "--buffer-kb must be" in line


def test_fractional_duration_is_kept():
    r = advisor("capture", "--duration", "2.5")
    assert r.code == 0, r.err
    assert r.out.strip().endswith("sleep 2.5")


@pytest.mark.parametrize(
    "text, value",
    [("1414\n", "1414"), ("7 (expanded: 1408)\n", "1408"), ("X\n", "X")],
)
def test_buffer_size_as_the_kernel_shows_it(text, value):
    assert buffer_kb(text) == value


def test_clock_is_the_bracketed_one():
    assert clock("local [global] counter uptime perf mono\n") == "global"


def fake_tracefs(root: Path) -> Path:
    """The files of a tracefs, as a 6.x kernel shows them before any tracing."""
    files = {
        "tracing_on": "1",
        "current_tracer": "nop",
        "buffer_percent": "50",
        "tracing_cpumask": "3",
        "saved_cmdlines_size": "128",
        "trace_clock": "[local] global counter uptime perf mono mono_raw boot tai x86-tsc",
        "buffer_size_kb": "7 (expanded: 1408)",
        "per_cpu/cpu0/buffer_size_kb": "7 (expanded: 1408)",
        "per_cpu/cpu1/buffer_size_kb": "7 (expanded: 1408)",
        "options/record-tgid": "0",
        "options/event-fork": "0",
        "events/writeback/writeback_start/filter": "none",
        "events/block/block_rq_issue/filter": "bytes > 4096",
        "set_event": "sched:sched_process_fork",
        "set_event_pid": "",
        "set_event_notrace_pid": "",
    }
    for name, value in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(value + "\n")
    return root


def test_every_touched_setting_is_restored(tmp_path):
    root = fake_tracefs(tmp_path)
    before = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
    state = TracingState.save(root, ["writeback:writeback_start", "block:block_rq_issue"])
    # What a killed `trace-cmd record -C global -P 42 -b 8192 -f ... -O record-tgid` leaves.
    touched = {
        "tracing_on": "0",
        "current_tracer": "function",
        "trace_clock": "local [global] counter uptime perf mono mono_raw boot tai x86-tsc",
        "buffer_size_kb": "8192",
        "per_cpu/cpu0/buffer_size_kb": "8192",
        "per_cpu/cpu1/buffer_size_kb": "8192",
        "options/record-tgid": "1",
        "events/writeback/writeback_start/filter": "bdi == 8",
        "events/block/block_rq_issue/filter": "none",
        "set_event": "writeback:writeback_start block:block_rq_issue",
        "set_event_pid": "42 43",
        "buffer_percent": "0",
    }
    for name, value in touched.items():
        (root / name).write_text(value + "\n")
    assert state.restore() == []
    after = {name: (root / name).read_text().strip() for name in touched}
    assert after == {
        "tracing_on": "1",
        "current_tracer": "nop",
        "trace_clock": "local",  # a real tracefs shows the list again, with [local]
        "buffer_size_kb": "1408",  # the setting, not "7 (expanded: 1408)"
        "per_cpu/cpu0/buffer_size_kb": "8192",  # equal per-CPU sizes: the top-level file sets them all
        "per_cpu/cpu1/buffer_size_kb": "8192",
        "options/record-tgid": "0",
        "events/writeback/writeback_start/filter": "0",  # what clears a filter
        "events/block/block_rq_issue/filter": "bytes > 4096",
        "set_event": "sched:sched_process_fork",
        "set_event_pid": "",
        "buffer_percent": "50",
    }
    # Settings nobody touched are not written at all.
    untouched = [p for p in before if str(p.relative_to(root)) not in touched]
    assert all(p.read_text() == before[p] for p in untouched)


def test_per_cpu_sizes_that_differ_are_restored_each(tmp_path):
    root = fake_tracefs(tmp_path)
    (root / "buffer_size_kb").write_text("X\n")
    (root / "per_cpu/cpu0/buffer_size_kb").write_text("1024\n")
    (root / "per_cpu/cpu1/buffer_size_kb").write_text("4096\n")
    state = TracingState.save(root)
    for name in ("buffer_size_kb", "per_cpu/cpu0/buffer_size_kb", "per_cpu/cpu1/buffer_size_kb"):
        (root / name).write_text("65536\n")
    assert state.restore() == []
    assert (root / "per_cpu/cpu0/buffer_size_kb").read_text() == "1024\n"
    assert (root / "per_cpu/cpu1/buffer_size_kb").read_text() == "4096\n"


def test_a_file_that_cannot_be_written_is_named(tmp_path):
    root = fake_tracefs(tmp_path)
    state = TracingState.save(root)
    (root / "current_tracer").unlink()
    (root / "current_tracer").mkdir()  # writing fails (EISDIR)
    assert state.restore() == ["current_tracer"]


IGNORES_SIGINT = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('ready', flush=True); time.sleep(600)"


def test_a_recorder_that_ignores_sigint_is_stopped_in_bounded_time(monkeypatch):
    monkeypatch.setattr(capture_cmd, "FINISH_S", 0.5)
    monkeypatch.setattr(capture_cmd, "TERM_S", 0.5)
    p = subprocess.Popen([sys.executable, "-c", IGNORES_SIGINT], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    started = time.monotonic()
    codes = capture_cmd.stop_all([p])
    assert time.monotonic() - started < 5
    assert codes == [-15]


def test_a_recorder_past_its_duration_is_stopped(monkeypatch):
    monkeypatch.setattr(capture_cmd, "FINISH_S", 0.5)
    monkeypatch.setattr(capture_cmd, "TERM_S", 0.5)
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    started = time.monotonic()
    codes = capture_cmd.wait_all([p], 0.5)
    assert time.monotonic() - started < 5
    assert codes == [-2]  # SIGINT was enough
