"""`advisor io`: btt-style block I/O summary of a capture."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from advisor.cli.console import err, print_json
from advisor.cli.sql_cmd import resolve_stores
from advisor.io import io_summary
from advisor.io.summary import PHASES
from advisor.store import open_store


def _ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:.3f}"


def io(
    traces: List[Path] = typer.Argument(..., help="blktrace data (NAME, NAME.blktrace.N, a blkparse -d file), a store, or the incident's captures."),
    device: Optional[str] = typer.Option(None, "--device", "-d", help="Only this device, e.g. 8,0."),
    json_out: bool = typer.Option(False, "--json", help="The summary as JSON on stdout."),
    btt_compat: bool = typer.Option(
        False, "--btt-compat",
        help="btt's rules: majors 9, 253 and 254 are remappers, D2C per queued bio (equals btt's output)."),
) -> None:
    """Block I/O latency by phase (btt's Q2G, G2I, I2D, D2C, Q2C...), per device and process.

    Example: advisor io sample_traces/blk-ext4-fsync
    """
    store = resolve_stores(traces)
    with open_store(store) as con:
        s = io_summary(con, device, btt_compat)
    if json_out:
        print_json(s)
        return
    render(s)


def render(s: dict) -> None:
    for r in s.get("roles", []):
        err.print(f"device {r['dev']}: {r['role']}")
    for note in s.get("notes", []):
        err.print(f"note: {note}", highlight=False)
    for dev in s["devices"]:
        t = Table(title=f"device {dev}: phase latency (ms)", show_edge=False, header_style="bold")
        for c in ("phase", "N", "min", "avg", "p50", "p90", "p99", "max"):
            t.add_column(c, justify="left" if c == "phase" else "right")
        rows = {r["phase"]: r for r in s["phases"] if r["dev"] == dev}
        for p in PHASES:
            r = rows.get(p)
            if r:
                t.add_row(p, f"{r['n']:,}", *(_ms(r[k]) for k in ("min_ns", "avg_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns")))
        err.print(t)
    if s["overhead"]:
        t = Table(title="device overhead (% of Q2C time)", show_edge=False, header_style="bold")
        t.add_column("dev")
        for p in ("Q2G", "G2I", "Q2M", "I2D", "D2C"):
            t.add_column(p, justify="right")
        for r in s["overhead"]:
            t.add_row(r["dev"], *(f"{r[p]:.2f}%" for p in ("Q2G", "G2I", "Q2M", "I2D", "D2C")))
        err.print(t)
    if s["merges"]:
        _merges_table(s)
    t = Table(show_edge=False, header_style="bold")
    for c in ("dev", "dir", "completions", "MiB", "IOPS", "MiB/s"):
        t.add_column(c, justify="right")
    for r in s["throughput"]:
        t.add_row(r["dev"], r["direction"], f"{r['completions']:,}", f"{r['bytes'] / 2**20:.1f}", f"{r['iops']:.0f}", f"{r['bytes_per_s'] / 2**20:.1f}")
    err.print(t)
    for kind in ("d2d", "q2q"):
        if not s["seeks"][kind]:
            continue
        t = Table(title=f"{kind.upper()} seek distance (sectors)", show_edge=False, header_style="bold")
        for c in ("dev", "seeks", "mean", "median", "mode (count)"):
            t.add_column(c, justify="right")
        for r in s["seeks"][kind]:
            t.add_row(r["dev"], f"{r['nseeks']:,}", f"{r['mean']:.1f}", f"{r['median']}", f"{r['mode']} ({r['mode_count']})")
        err.print(t)
    _rest(s)


def _merges_table(s: dict) -> None:
    t = Table(title="merges, depth and throughput", show_edge=False, header_style="bold")
    for c in ("dev", "#Q", "#D", "Q/D", "blk avg", "max depth R/W", "avg active @Q"):
        t.add_column(c, justify="right")
    depth = {r["dev"]: r for r in s["depth"]}
    for m in s["merges"]:
        d = depth.get(m["dev"], {})
        t.add_row(
            m["dev"], f"{m['q']:,}", f"{m['d']:,}", f"{m['ratio']:.2f}" if m["ratio"] else "",
            f"{m['blk_avg']:.0f}", f"{d.get('max_depth_read', 0)}/{d.get('max_depth_write', 0)}",
            "" if d.get("avg_active_at_q") is None else f"{d['avg_active_at_q']:.1f}",
        )
    err.print(t)


def _rest(s: dict) -> None:
    t = Table(title="latency histogram", show_edge=False, header_style="bold")
    t.add_column("≤ ms", justify="right")
    for p in ("D2C", "Q2C"):
        t.add_column(p, justify="right")
    edges = sorted({r["le_ms"] for r in s["histogram"]}, key=lambda x: (x is None, x))
    counts = {(r["phase"], r["le_ms"]): r["n"] for r in s["histogram"]}
    for e in edges:
        t.add_row("more" if e is None else f"{e:g}", *(f"{counts.get((p, e), 0):,}" for p in ("D2C", "Q2C")))
    err.print(t)
    t = Table(title="per process (ms)", show_edge=False, header_style="bold")
    for c in ("process", "phase", "N", "avg", "max"):
        t.add_column(c, justify="right")
    for r in s["processes"]:
        t.add_row(r["process"], r["phase"], f"{r['n']:,}", _ms(r["avg_ns"]), _ms(r["max_ns"]))
    err.print(t)
