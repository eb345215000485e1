"""What the benchmarks share: timing a child process, and the machine's facts."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from pathlib import Path


#: What btt's phase times cost with the C tools: blkparse's binary dump of the
#: device set `big` in directory $1, then btt on it.
BLKPARSE_D_BTT = """
set -e
d=$(mktemp -d)
blkparse -i big -D "$1" -d "$d/m.bin" -O > /dev/null
cd "$d" && btt -i m.bin > /dev/null
rm -rf "$d"
"""


def timed(cmd: list[str], stdout=subprocess.DEVNULL) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_maxrss


def median_run(cmd: list[str], repeat: int, stdout=subprocess.DEVNULL) -> tuple[float, int]:
    """Median wall seconds over `repeat` runs, and the largest peak RSS (KiB)."""
    runs = [timed(cmd, stdout) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def tool_version(cmd: list[str]) -> str:
    """First line a tool prints about its version (stdout or stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    text = (p.stdout + p.stderr).strip()
    return text.splitlines()[0] if text else "?"


def machine(tools: dict[str, list[str]]) -> dict:
    """CPU, cores, memory, kernel, Python, DuckDB and the peer tools' versions."""
    import duckdb

    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = Path("/proc/meminfo").read_text().split()[1]
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(int(mem) / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        **{name: tool_version(cmd) for name, cmd in tools.items()},
    }
