"""`advisor capture --run` for real: it records through the lab's trace-cmd wrapper
(WRITEBACK_ADVISOR_RECORD, as on this locked-down host) while a small fsync workload
runs, the trace it writes ingests and analyzes, and the tracing state it found
(set_event, tracing_on, buffer_size_kb) is back afterwards, also after Ctrl-C.

Needs root, tracefs and shared/lab/tc-record (CI runs as root on the lab machine);
skipped, with the reason, where the recorder or tracefs is absent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import advisor, command

TRACEFS = Path("/sys/kernel/tracing")
# write spans + page waits: they exist on current kernels, and the rule applies to any
# filesystem (the test writes into its temporary directory, whatever that is).
RULE = "stable-page-wait"
FSYNCS = 12


def recorder() -> Path | None:
    for p in (ROOT.parent / "shared" / "lab" / "tc-record", Path("/work/shared/lab/tc-record")):
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def _skip_reason() -> str | None:
    if recorder() is None:
        return "shared/lab/tc-record (the lab's trace-cmd wrapper) is not on this machine"
    if not (TRACEFS / "set_event").exists():
        return f"tracefs is not mounted at {TRACEFS}"
    if os.geteuid() != 0:
        return "recording needs root"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def read_state() -> dict:
    return {
        "tracing_on": (TRACEFS / "tracing_on").read_text().strip(),
        "buffer_size_kb": (TRACEFS / "buffer_size_kb").read_text().strip(),
        "set_event": sorted((TRACEFS / "set_event").read_text().split()),
    }


def write_state(state: dict) -> None:
    (TRACEFS / "tracing_on").write_text(state["tracing_on"] + "\n")
    (TRACEFS / "buffer_size_kb").write_text(state["buffer_size_kb"] + "\n")
    with open(TRACEFS / "set_event", "w") as f:  # O_TRUNC disables all; each line enables one
        for e in state["set_event"]:
            f.write(e + "\n")
            f.flush()


def wait_for_other_recorders(limit_s: float = 120) -> None:
    """The top-level ring buffer is global: another trace-cmd record would change the state under us."""
    deadline = time.monotonic() + limit_s
    while True:
        busy = subprocess.run(["pgrep", "-a", "-x", "trace-cmd"], capture_output=True, text=True).stdout.strip()
        if not busy:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"another trace-cmd is using the ring buffer for over {limit_s:.0f} s: {busy}")
        time.sleep(2)


@pytest.fixture
def odd_tracing_state():
    """A state trace-cmd would not leave behind by itself: tracing off, an odd buffer size and one
    unrelated event enabled. Yields it; puts back what was there before the test in any case."""
    wait_for_other_recorders()
    before = read_state()
    odd = {"tracing_on": "0", "buffer_size_kb": "1412", "set_event": ["sched:sched_process_fork"]}
    write_state(odd)
    try:
        yield read_state()
    finally:
        write_state(before)


def fsync_workload(directory: Path, stop: threading.Event) -> None:
    """A few 64 KiB writes, each followed by fsync, until `stop` (at least FSYNCS of them)."""
    path = directory / "fsync-workload.dat"
    with open(path, "wb") as f:
        n = 0
        while n < FSYNCS or not stop.is_set():
            f.write(os.urandom(65536))
            f.flush()
            os.fsync(f.fileno())
            n += 1
            time.sleep(0.05)


def capture_env() -> dict:
    return {"WRITEBACK_ADVISOR_RECORD": str(recorder())}


def analyzed(trace: Path) -> dict:
    r = advisor("analyze", str(trace), "--rule", RULE, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_capture_run_records_analyzes_and_restores_state(tmp_path, odd_tracing_state):
    out = tmp_path / "run.dat"
    stop = threading.Event()
    writer = threading.Thread(target=fsync_workload, args=(tmp_path, stop))
    r_holder = {}

    def run():
        r_holder["r"] = advisor("capture", "--for", RULE, "--duration", "2", "--buffer-kb", "4096",
                                "-o", str(out), "--run", env=capture_env())

    cap = threading.Thread(target=run)
    cap.start()
    time.sleep(0.8)  # trace-cmd sets up and starts its 2 s `sleep` meanwhile
    writer.start()
    cap.join(timeout=300)
    stop.set()
    writer.join(timeout=60)
    r = r_holder["r"]
    assert r.code == 0, r.err
    assert f"running: {recorder()} " in r.err  # the lab wrapper, not plain trace-cmd
    assert out.stat().st_size > 0

    assert read_state() == odd_tracing_state

    doc = analyzed(out)
    assert doc["kernel"]["release"] == os.uname().release
    assert doc["capture"]["lost_events"] == 0
    f = doc["findings"][0]
    assert f["rule"] == RULE and f["verdict"] not in ("insufficient-data", "not-applicable"), f["message"]
    # our writer's writes (others on the machine may add to them)
    assert f["metrics"]["write_count"] >= 1, f["metrics"]


def test_ctrl_c_stops_the_recording_keeps_the_trace_and_restores_state(tmp_path, odd_tracing_state):
    out = tmp_path / "ctrl-c.dat"
    proc = subprocess.Popen(
        [*command(), "capture", "--for", RULE, "--duration", "120", "--buffer-kb", "4096",
         "-o", str(out), "--run"],
        env={**os.environ, **capture_env()},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        # and SIGINT at its default, as in a terminal: a runner that started us in the background
        # of a non-interactive shell passes SIGINT down ignored, and Python then keeps ignoring it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # recording has begun when the events are enabled and tracing is on
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = read_state()
            if state["tracing_on"] == "1" and "writeback:folio_wait_writeback" in state["set_event"]:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("the recording never started")
        (tmp_path / "x").write_bytes(b"x" * 4096)
        fd = os.open(tmp_path / "x", os.O_RDWR)
        os.fsync(fd)
        os.close(fd)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: SIGINT to the whole foreground group
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert "interrupted: the recorders stopped" in err  # the KeyboardInterrupt path, not a normal end
    assert read_state() == odd_tracing_state
    doc = analyzed(out)
    assert doc["findings"][0]["verdict"] != "insufficient-data", doc["findings"][0]["message"]
