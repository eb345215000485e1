"""`advisor io`: btt-style block I/O summary of a capture."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import List, Optional

import typer
from advisor.cli import head_start
from advisor.cli.console import JsonFlag, limit_option, more_rows, out, print_json, table, warn
from advisor.cli.progress import bytes_progress
from advisor.cli.sql_cmd import resolve_stores
from advisor.errors import UsageError
from advisor.io.fast import blktrace_summary, lost_records, only_blktrace
from advisor.io.summary import PHASES, io_summary


def _ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:.3f}"


def io(
    traces: List[Path] = typer.Argument(..., metavar="TRACE...", help="blktrace data (NAME, NAME.blktrace.N, a blkparse -d file), a store, or the incident's captures."),
    device: Optional[str] = typer.Option(None, "--device", "-d", metavar="MAJ,MIN", help="Only this device, e.g. 8,0 (or 8:0)."),
    json_out: JsonFlag = False,
    limit: int = limit_option(what="processes in the per-process table"),
    btt_compat: bool = typer.Option(
        False, "--btt-compat",
        help="btt's rules: majors 9, 253 and 254 are remappers, D2C per queued bio (equals btt's output)."),
) -> None:
    """Block I/O latency by phase (btt's Q2G, G2I, I2D, D2C, Q2C...), per device and process.

    Example: advisor io sda   (the sda.blktrace.N files `blktrace -d /dev/sda` wrote)
    """
    s = _from_files(traces, device, btt_compat) if only_blktrace(traces) else None
    if s is None:
        s = _from_store(traces, device, btt_compat)
    if json_out:
        print_json(s)
        return
    render(s, limit)


@contextlib.contextmanager
def _naming(traces: List[Path]):
    """The summary's usage errors ("no device 9,9 in this capture") name the capture."""
    try:
        yield
    except UsageError as e:
        label = str(traces[0]) if len(traces) == 1 else f"{traces[0]} and {len(traces) - 1} more"
        raise UsageError(f"{label}: {e}") from None


def _from_files(traces: List[Path], device: Optional[str], btt_compat: bool) -> Optional[dict]:
    """Binary blktrace alone: the parser answers as it reads, no store is built
    (None past what it holds in memory)."""
    label = traces[0].name if len(traces) == 1 else f"{len(traces)} inputs"
    with bytes_progress(f"read {label}") as progress:
        started = head_start.take([str(t) for t in traces], device, btt_compat)
        with _naming(traces):
            s = blktrace_summary(traces, device, btt_compat, progress, warn, job=started)
    if s is None:
        warn("the capture holds more than the summary keeps in memory; reading it into a store instead")
    return s


def _from_store(traces: List[Path], device: Optional[str], btt_compat: bool) -> dict:
    """The summary by SQL over the captures' store (ingested first if need be)."""
    from advisor.store import open_store  # noqa: PLC0415 (DuckDB and Arrow: only for a store)
    from advisor.store.interrupts import interruptible  # noqa: PLC0415

    store = resolve_stores(traces)
    with open_store(store) as con, interruptible(con), _naming(traces):
        s = io_summary(con, device, btt_compat)
        for line in lost_records(con.execute("SELECT * FROM parse_stats").fetchall()):
            warn(line)
    return s


def render(s: dict, limit: int = 20) -> None:
    """The summary as btt prints it, one table per section, on stdout, after how each device
    was read (disk or remapper) and where the result differs from btt's."""
    for r in s.get("roles", []):
        out.print(f"device {r['dev']}: {r['role']}", markup=False, highlight=False)
    for note in s.get("notes", []):
        out.print(f"note: {note}", markup=False, highlight=False)
    if s.get("roles") or s.get("notes"):
        out.print("")
    for dev in s["devices"]:
        t = table("phase", "N", "min", "avg", "p50", "p90", "p99", "max", title=f"device {dev}: phase latency (ms)",
                  right=("N", "min", "avg", "p50", "p90", "p99", "max"))
        rows = {r["phase"]: r for r in s["phases"] if r["dev"] == dev}
        for p in PHASES:
            r = rows.get(p)
            if r:
                t.add_row(p, f"{r['n']:,}", *(_ms(r[k]) for k in ("min_ns", "avg_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns")))
        out.print(t, "")
    phases = ("Q2G", "G2I", "Q2M", "I2D", "D2C")
    if s["overhead"]:
        t = table("dev", *phases, title="device overhead (% of Q2C time)", right=phases)
        for r in s["overhead"]:
            t.add_row(r["dev"], *(f"{r[p]:.2f}%" for p in phases))
        out.print(t, "")
    if s["merges"]:
        _merges(s)
    numeric = ("completions", "MiB", "IOPS", "MiB/s")
    t = table("dev", "dir", *numeric, title="throughput", right=numeric)
    for r in s["throughput"]:
        t.add_row(r["dev"], r["direction"], f"{r['completions']:,}", f"{r['bytes'] / 2**20:.1f}", f"{r['iops']:.0f}", f"{r['bytes_per_s'] / 2**20:.1f}")
    out.print(t, "")
    for kind in ("d2d", "q2q"):
        if not s["seeks"][kind]:
            continue
        numeric = ("seeks", "mean", "median", "mode (count)")
        t = table("dev", *numeric, title=f"{kind.upper()} seek distance (sectors)", right=numeric)
        for r in s["seeks"][kind]:
            t.add_row(r["dev"], f"{r['nseeks']:,}", f"{r['mean']:.1f}", f"{r['median']}", f"{r['mode']} ({r['mode_count']})")
        out.print(t, "")
    t = table("≤ ms", "D2C", "Q2C", title="latency histogram (requests)", right=("≤ ms", "D2C", "Q2C"))
    edges = sorted({r["le_ms"] for r in s["histogram"]}, key=lambda x: (x is None, x))
    counts = {(r["phase"], r["le_ms"]): r["n"] for r in s["histogram"]}
    for e in edges:
        t.add_row("more" if e is None else f"{e:g}", *(f"{counts.get((p, e), 0):,}" for p in ("D2C", "Q2C")))
    out.print(t, "")
    t = table("process", "phase", "N", "avg ms", "max ms", title="per process", right=("N", "avg ms", "max ms"), names=("process",))
    for r in s["processes"][:limit]:
        t.add_row(r["process"], r["phase"], f"{r['n']:,}", _ms(r["avg_ns"]), _ms(r["max_ns"]))
    out.print(t)
    if len(s["processes"]) > limit:
        out.print(more_rows(len(s["processes"]) - limit))


def _merges(s: dict) -> None:
    numeric = ("#Q", "#D", "Q/D", "blk avg", "max depth R/W", "avg active @Q")
    t = table("dev", *numeric, title="merges, depth and throughput", right=numeric)
    depth = {r["dev"]: r for r in s["depth"]}
    for m in s["merges"]:
        d = depth.get(m["dev"], {})
        t.add_row(
            m["dev"], f"{m['q']:,}", f"{m['d']:,}", f"{m['ratio']:.2f}" if m["ratio"] else "",
            f"{m['blk_avg']:.0f}", f"{d.get('max_depth_read', 0)}/{d.get('max_depth_write', 0)}",
            "" if d.get("avg_active_at_q") is None else f"{d['avg_active_at_q']:.1f}",
        )
    out.print(t, "")
