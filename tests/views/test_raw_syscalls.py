"""Syscalls recorded as `-e raw_syscalls` (sys_enter/sys_exit with the call's number):
the syscall views name them by the capture's architecture and pair them like the calls'
own events (sample_traces/capture/35-raw-syscalls-ext4.sh)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from advisor.store import open_store
from advisor.views import CATALOG, attach, raw_syscalls
from advisor.views.model import build
from advisor.views.present import Present
from tests.conftest import SAMPLES, samples
from tests.helpers import advisor as run_cli

BOTH = "raw-and-named-syscalls-ext4-v7-zstd.dat"
RAW = "raw-syscalls-ext4-v7-zstd.dat"
NAMED = frozenset(f"syscalls:sys_{d}_{c}" for c in ("sync", "fsync", "fdatasync", "write", "pwrite64", "ioctl")
                  for d in ("enter", "exit"))
# raw_syscalls:sys_enter and syscalls:sys_enter_fsync are two tracepoints on one path:
# in BOTH they fire 0.4-1.2 us apart.
SKEW_NS = 20_000
VIEWS = {"sync_ops": ("pid", "comm", "syscall", "complete", "ret", "fd"),
         "fsync_ops": ("pid", "comm", "syscall", "complete", "ret", "fd"),
         "write_ops": ("pid", "comm", "syscall", "complete", "ret", "fd", "count"),
         "snapshot_ops": ("pid", "syscall", "cmd")}


def _spans(con, view: str) -> list[tuple]:
    cols = ", ".join(VIEWS[view])
    return con.execute(f"SELECT {cols}, start_ts, end_ts FROM {view} ORDER BY pid, syscall, start_ts").fetchall()


def test_the_calls_by_number_are_the_calls_by_name(store_of):
    """BOTH recorded every sync, fsync, fdatasync and write twice: as raw_syscalls and as
    the calls' own events. With the latter hidden, each view has the same calls: same
    task, call, descriptor, size and return, each time within SKEW_NS."""
    with open_store(store_of(BOTH)) as con:
        named_views = attach(con)
        named = {v: _spans(con, v) for v in VIEWS}
        raw_views = attach(con, hide=NAMED)
        raw = {v: _spans(con, v) for v in VIEWS}
    for v in VIEWS:
        assert "raw_syscalls" not in named_views.built[v].source
        assert raw_views.built[v].source.endswith("(raw_syscalls)")
        assert "x86_64" in raw_views.built[v].lacks
        assert len(raw[v]) == len(named[v]), v
        n = len(VIEWS[v])
        for a, b in zip(named[v], raw[v]):
            assert a[:n] == b[:n], (v, a, b)
            for ta, tb in zip(a[n:], b[n:]):
                assert (ta is None) == (tb is None) and (ta is None or abs(ta - tb) <= SKEW_NS), (v, a, b)
    calls = {}
    for row in raw["sync_ops"] + raw["fsync_ops"]:
        calls[row[2]] = calls.get(row[2], 0) + 1
    assert calls == {"sync": 1, "fsync": 20, "fdatasync": 2}  # the workload's own calls
    assert sum(r[6] for r in raw["write_ops"] if r[1] == "dd") == 124 << 20


def test_a_capture_with_raw_syscalls_only(tmp_path):
    """The way users record it: -e raw_syscalls, no per-call events. analyze measures the
    sync and the writes from them (the sync timed outside the trace too)."""
    [meta] = [m for m in samples() if m["file"] == RAW]
    r = run_cli("analyze", str(SAMPLES / RAW), "--json", env={"WRITEBACK_ADVISOR_CACHE": str(tmp_path)})
    assert r.code == 0, r.err
    findings = {f["rule"]: f for f in json.loads(r.out)["findings"]}
    sync = findings["sync-flusher-stall"]["metrics"]
    assert sync["sync_count"] == 1
    outside = meta["measurements"]["sync_seconds_outside_trace"]
    assert outside * 0.8 <= sync["sync_seconds"] <= outside  # date(1) around sync(1) also times its exec
    stable = findings["stable-page-wait"]
    assert stable["verdict"] != "insufficient-data" and stable["metrics"]["write_count"] > 100
    assert "raw_syscalls" in json.dumps(stable["sources"])


def _present(uname: str | None) -> Present:
    p = Present(uname=uname, arch=raw_syscalls.architecture(uname))
    for event, table, fields in ((raw_syscalls.ENTER, "sys_enter", raw_syscalls.ENTER_FIELDS),
                                 (raw_syscalls.EXIT, "sys_exit", raw_syscalls.EXIT_FIELDS)):
        p.tables[event] = (table, 10)
        p.columns[table] = {"ts", "pid", "comm", *fields}
    return p


@pytest.mark.parametrize("uname, why", [
    ("Linux box 6.1.0 s390x", "'Linux box 6.1.0 s390x') is not one whose syscall numbers are known"),
    (None, "does not say its machine (uname)"),
])
def test_numbers_without_a_known_machine_name_nothing(uname, why):
    built = build(CATALOG["fsync_ops"], _present(uname))
    assert not built.available
    assert why in built.lacks


@pytest.mark.parametrize("uname, arch", [("Linux vm 6.18.44 x86_64", "x86_64"), ("Linux pi 6.6.31+rpt-rpi-v8 #1 SMP aarch64 GNU/Linux", "aarch64"),
                                         ("Linux h 6.1 riscv64", "riscv64"), ("Linux h 6.1 i686", None)])
def test_the_machine_from_uname(uname, arch):
    assert raw_syscalls.architecture(uname) == arch
    assert build(CATALOG["sync_ops"], _present(uname)).available == (arch is not None)


HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), "aarch64": Path("/usr/include/asm-generic/unistd.h")}


@pytest.mark.parametrize("arch", sorted(HEADERS))
def test_the_numbers_are_the_kernel_headers(arch):
    """Against the installed kernel headers (linux-libc-dev): x86_64's own table, and the
    generic one arm64, riscv64 and loongarch64 use."""
    if not HEADERS[arch].exists():
        pytest.skip(f"{HEADERS[arch]} not installed (linux-libc-dev)")
    text = HEADERS[arch].read_text()
    for name, nr in raw_syscalls.NUMBERS[arch].items():
        m = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)\b", text)
        assert m and int(m[1]) == nr, (arch, name, nr)
