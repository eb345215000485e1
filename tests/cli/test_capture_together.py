"""`advisor capture --device`: both layers on one clock, and one line that runs them together."""

from __future__ import annotations

import os
import subprocess
import time

from tests.helpers import advisor

# Stand-ins for the recorders: each notes when it started and ended.
FAKE = """#!/bin/sh
echo "$(basename "$0") start $(date +%s.%N) $*" >> "$LOG"
sleep 1
echo "$(basename "$0") end $(date +%s.%N)" >> "$LOG"
"""


def test_printed_line_records_both_layers_at_once(tmp_path):
    r = advisor("capture", "--for", "all", "--device", "/dev/vda", "-o", str(tmp_path / "w.dat"), "--duration", "1")
    assert r.code == 0, r.err
    lines = r.out.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert "trace-cmd record -C mono " in line and " & trace-cmd record" in line and line.endswith("; wait")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("blktrace", "trace-cmd"):
        (bindir / name).write_text(FAKE)
        (bindir / name).chmod(0o755)
    log = tmp_path / "log"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "LOG": str(log)}
    started = time.monotonic()
    subprocess.run(["sh", "-c", line], cwd=tmp_path, env=env, check=True, timeout=30)
    took = time.monotonic() - started
    events = {(w[0], w[1]): float(w[2]) for w in (ln.split() for ln in log.read_text().splitlines())}
    # Each ran for 1 s; together, not one after the other.
    assert events[("blktrace", "start")] < events[("trace-cmd", "end")]
    assert events[("trace-cmd", "start")] < events[("blktrace", "end")]
    assert took < 1.9
    assert (tmp_path / "w.blktrace").is_dir()
