"""What an ingest found: a summary for people on stdout, a dict for --json."""

from __future__ import annotations

import glob
import re
from pathlib import Path

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from advisor.cli.console import more_rows, out, section, table
from advisor.display import TICKS_CAVEAT
from advisor.store_settings import UNKNOWN_TYPE_PREFIX
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.store import IngestResult



def fmt_ns(ns: int) -> str:
    """Seconds with nine decimals: the trace's own precision, no float."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def cpu_files(traces) -> list[str]:
    """The per-CPU blktrace files an ingest read: given NAME.blktrace.0 (or NAME), blktrace's
    reader takes every NAME.blktrace.N, as `blkparse -i NAME` does."""
    out: list[str] = []
    for t in traces:
        t = Path(t)
        m = re.fullmatch(r"(.+)\.blktrace\.\d+", t.name)
        base = m.group(1) if m else t.name
        found = sorted(t.parent.glob(f"{glob.escape(base)}.blktrace.*"), key=lambda p: (len(p.name), p.name))
        found = [p for p in found if re.fullmatch(r"\d+", p.name.rsplit(".", 1)[1])]
        if found and (m or not t.is_file()):
            out += [str(p) for p in found if str(p) not in out]
    return out


def as_dict(r: IngestResult) -> dict:
    info = r.info
    return {
        "trace": str(r.trace),
        "traces": [str(t) for t in r.traces],
        "blktrace_cpu_files": cpu_files(r.traces),
        "store": str(r.store),
        "cached": r.cached,
        "seconds": round(r.seconds, 3),
        "format": info.get("format"),
        "kernel_release": info.get("kernel_release"),
        "clock": info.get("clock"),
        "events": r.events,
        "first_ts": int(info["first_ts"]) if "first_ts" in info else None,
        "last_ts": int(info["last_ts"]) if "last_ts" in info else None,
        "events_by_type": dict(sorted(r.events_by_type.items(), key=lambda kv: -kv[1])),
        "blk_events": r.blk_events,
        "blk_actions": dict(sorted(r.blk_actions.items(), key=lambda kv: -kv[1])),
        "lost_events": r.lost_events,
        "data_loss": [
            {"name": s[0], "cpu": s[1], "count": s[3], "description": s[4]} for s in r.data_loss
        ],
        "warnings": [{"name": s[0], "count": s[3], "description": s[4]} for s in r.warnings],
        "damaged": r.damaged,
        "damage": r.damage,
    }


def render(r: IngestResult, limit: int = 25) -> None:
    info = r.info
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("input" if len(r.traces) == 1 else "inputs", "\n".join(str(t) for t in r.traces))
    read = cpu_files(r.traces)
    if read and [str(t) for t in r.traces] != read:
        facts.add_row("read", "\n".join(read) + "\n[dim](every CPU's blktrace file, as blkparse -i NAME reads them)[/]")
    facts.add_row("store", f"{r.store}" + ("  [dim](cached)[/]" if r.cached else f"  [dim]({r.seconds:.2f} s)[/]"))
    if "format" in info:
        facts.add_row("format", _format_line(info))
        facts.add_row("kernel", info.get("kernel_release") or "[yellow]unknown (no uname in the capture)[/]")
    if "first_ts" in info:
        span = int(info["last_ts"]) - int(info["first_ts"])
        if info.get("ts_unit", "ns") == "ns":
            facts.add_row("time span", f"{fmt_ns(int(info['first_ts']))} … {fmt_ns(int(info['last_ts']))}  ({fmt_ns(span)} s, clock {info.get('clock', '?')})")
        else:  # -C x86-tsc (TSC cycles) or -C counter
            facts.add_row("time span", f"{info['first_ts']} … {info['last_ts']}  ({span:,} clock ticks, clock {info.get('clock', '?')}: "
                          f"[yellow]{TICKS_CAVEAT}[/])")
    if "format" in info:
        unknown = sum(x[3] for x in r.data_loss if x[0].startswith(UNKNOWN_TYPE_PREFIX))
        facts.add_row("events", f"{r.events:,} in {len(r.events_by_type)} types"
                      + (f"; [red]{unknown:,} more of types the file has no format for[/] (kept raw in unknown_events)" if unknown else ""))
    if r.blk_actions:
        acts = ", ".join(f"{a} {n:,}" for a, n in sorted(r.blk_actions.items(), key=lambda kv: -kv[1]))
        span = ""
        if "blktrace_first_ts" in info:
            span = f" over {fmt_ns(int(info['blktrace_last_ts']) - int(info['blktrace_first_ts']))} s"
        facts.add_row("blktrace", f"{r.blk_events:,} records{span} ({info.get('blktrace_format', '')}): {acts}")
    if r.damage:
        shown = r.damage[:10] + ([f"… {len(r.damage) - 10} more"] if len(r.damage) > 10 else [])
        facts.add_row("[red]damage[/]", "\n".join(shown))
    lost = r.data_loss
    if lost:
        lines = [f"{s[0]}{'' if s[1] is None else f' (cpu {s[1]})'}: {s[3]:,}" for s in lost]
        facts.add_row("[red]data loss[/]", "\n".join(lines))
    else:
        facts.add_row("data loss", "none reported")
    for w in r.warnings:
        facts.add_row("[yellow]warning[/]", escape(w[4]))
    out.print(section(Text("ingest", style="bold"), facts))
    if r.events_by_type:
        t = table("event", "events", title="events per type", right=("events",), names=("event",))
        items = sorted(r.events_by_type.items(), key=lambda kv: -kv[1])
        for name, n in items[:limit]:
            t.add_row(name, f"{n:,}")
        out.print(t)
        if len(items) > limit:
            rest = sum(n for _, n in items[limit:])
            out.print(more_rows(len(items) - limit, f"{rest:,} events; --limit"))


def damage_error(r: IngestResult) -> str:
    """The one line an ingest of a damaged capture ends with (exit 2)."""
    first = r.damage[0] if r.damage else f"{r.trace}: damaged"
    more = f" (and {len(r.damage) - 1} more)" if len(r.damage) > 1 else ""
    kept = f"{r.events:,} events" if r.events else f"{r.blk_events:,} blktrace records"
    return f"{first}{more}; the {kept} that could be read are in {r.store} (trace_info.partial, parse_stats)"


def _format_line(info: dict) -> str:
    fmt = info.get("format", "?")
    if fmt == "trace.dat":
        return f"trace.dat v{info.get('file_version')}, {info.get('compression')}, {info.get('tool', 'trace-cmd')}"
    return f"{fmt} ({info.get('text_variant', '')}, timestamps in {info.get('ts_precision', '?')})"
