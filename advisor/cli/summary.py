"""What an ingest found: a Rich summary for people, a dict for --json."""

from __future__ import annotations

from rich.panel import Panel
from rich.table import Table

from advisor.cli.console import err
from advisor.store import IngestResult

TOP_TYPES = 25


def fmt_ns(ns: int) -> str:
    """Seconds with nine decimals: the trace's own precision, no float."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def as_dict(r: IngestResult) -> dict:
    info = r.info
    return {
        "trace": str(r.trace),
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
        "lost_events": r.lost_events,
        "data_loss": [
            {"name": s[0], "cpu": s[1], "count": s[3], "description": s[4]} for s in r.data_loss
        ],
        "damaged": r.damaged,
        "damage": r.damage,
    }


def render(r: IngestResult) -> None:
    info = r.info
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row("trace", str(r.trace))
    facts.add_row("store", f"{r.store}" + ("  [dim](cached)[/]" if r.cached else f"  [dim]({r.seconds:.2f} s)[/]"))
    facts.add_row("format", _format_line(info))
    facts.add_row("kernel", info.get("kernel_release") or "[yellow]unknown (no uname in the capture)[/]")
    if "first_ts" in info:
        span = int(info["last_ts"]) - int(info["first_ts"])
        facts.add_row("time span", f"{fmt_ns(int(info['first_ts']))} … {fmt_ns(int(info['last_ts']))}  ({fmt_ns(span)} s, clock {info.get('clock', '?')})")
    facts.add_row("events", f"{r.events:,} in {len(r.events_by_type)} types")
    lost = r.data_loss
    if lost:
        lines = [f"{s[0]}{'' if s[1] is None else f' (cpu {s[1]})'}: {s[3]:,}" for s in lost]
        facts.add_row("[red]data loss[/]", "\n".join(lines))
    else:
        facts.add_row("data loss", "none reported")
    err.print(Panel(facts, title="ingest", expand=False))
    if r.events_by_type:
        t = Table(title="events per type", show_edge=False)
        t.add_column("event")
        t.add_column("count", justify="right")
        items = sorted(r.events_by_type.items(), key=lambda kv: -kv[1])
        for name, n in items[:TOP_TYPES]:
            t.add_row(name, f"{n:,}")
        if len(items) > TOP_TYPES:
            t.add_row(f"[dim]… {len(items) - TOP_TYPES} more types[/]", f"{sum(n for _, n in items[TOP_TYPES:]):,}")
        err.print(t)
    warn_damage(r)


def warn_damage(r: IngestResult) -> None:
    """Damage is always reported on stderr, whatever the output format."""
    if not r.damaged:
        return
    err.print(f"[red bold]{r.trace}: the capture is damaged:[/] what could be read is in the store (trace_info.partial = true)")
    for d in r.damage[:10]:
        err.print(f"  [red]•[/] {d}")
    if len(r.damage) > 10:
        err.print(f"  … {len(r.damage) - 10} more (see parse_stats)")


def _format_line(info: dict) -> str:
    fmt = info.get("format", "?")
    if fmt == "trace.dat":
        return f"trace.dat v{info.get('file_version')}, {info.get('compression')}, {info.get('tool', 'trace-cmd')}"
    return f"{fmt} ({info.get('text_variant', '')}, timestamps in {info.get('ts_precision', '?')})"
