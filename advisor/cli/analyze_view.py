"""The analysis for people: kernel, capture quality, one panel per rule (Rich)."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from advisor.cli.console import err
from advisor.rules import SEVERITY

STYLE = {
    "affected": "bold red",
    "at-risk": "bold yellow",
    "signature-without-known-bug": "bold magenta",
    "insufficient-data": "bold blue",
    "not-affected": "bold green",
    "not-applicable": "dim",
}


def render(doc: dict) -> None:
    err.print(_header(doc))
    for f in sorted(doc["findings"], key=lambda f: (-SEVERITY[f["verdict"]], f["rule"])):
        err.print(_panel(f))


def _header(doc: dict) -> Panel:
    k, c = doc["kernel"], doc["capture"]
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("kernel", f"{k['release'] or 'unknown'}  (from {k['from']}" + (", vendor kernel: backports possible)" if k["may_carry_backports"] else ")"))
    t.add_row("capture", f"{c['format'] or 'blktrace'}, clock {c['clock'] or 'n/a'}, {c['events']:,} events, {c['blk_events']:,} block records")
    span = f"{c['span_seconds']:.3f} s" if c["span_seconds"] is not None else "n/a"
    t.add_row("time span", span)
    lost = Text(f"{c['lost_events']:,} lost events", style="bold red" if c["lost_events"] else "green")
    if c["lost_events"]:
        lost.append("  metrics undercount what happened; re-capture with larger buffers (advisor capture)")
    t.add_row("quality", lost)
    if c["damaged"]:
        where = f" ({c['damage'][0]})" if c.get("damage") else ""
        t.add_row("damaged", Text(f"findings cover only what was read before the damage{where}", style="bold red"))
    return Panel(t, title="capture", border_style="dim")


def _panel(f: dict) -> Panel:
    parts: list = [Text(f["message"])]
    if f["verdict"] == "not-applicable":
        title = Text.assemble(("not-applicable", STYLE["not-applicable"]), "  ", (f["rule"], "bold"), f"  {f['title']}")
        return Panel(Group(*parts), title=title, title_align="left", border_style="dim")
    if any(v is not None for v in f["metrics"].values()):
        parts.append(_metrics(f))
    if f["unmeasured"]:
        parts.append(_unmeasured(f))
    checks = _checks(f)
    if checks is not None:
        parts.append(checks)
    for ev in f["evidence"]:
        if ev["rows"]:
            parts.append(_evidence(ev))
    parts.append(_recommendation(f))
    title = Text.assemble((f"{f['verdict']}", STYLE[f["verdict"]]), "  ", (f["rule"], "bold"), f"  {f['title']}")
    return Panel(Group(*parts), title=title, title_align="left", border_style=STYLE[f["verdict"]].split()[-1])


def _value(v, unit: str) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.3f}" if unit not in ("ratio",) else f"{v:.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _metrics(f: dict) -> Table:
    t = Table(show_edge=False, header_style="bold", box=None, padding=(0, 1))
    t.add_column("metric")
    t.add_column("value", justify="right")
    t.add_column("unit")
    unmeasured = {u["metric"] for u in f["unmeasured"]}
    for name, v in f["metrics"].items():
        unit = f["metric_units"].get(name, "")
        t.add_row(name, "not measurable" if name in unmeasured else _value(v, unit), unit)
    return t


def _unmeasured(f: dict) -> Text:
    """What the capture lacks for each unmeasured metric, and the command that records it."""
    text = Text("not measurable from this capture:\n", style="bold")
    for u in f["unmeasured"]:
        text.append(f"• {u['metric']}", style="bold")
        text.append(f" ({u['text']}): {u['why']}\n")
    text.append("record them with: ", style="bold")
    text.append(f["capture_command"] or "")
    return text


def _checks(f: dict) -> Table | None:
    rows = [("signature", c) for c in f["signature"]] + [("pattern", c) for c in f["pattern"]]
    if not rows:
        return None
    t = Table(show_edge=False, header_style="bold", box=None, padding=(0, 1))
    for c in ("check", "condition", "value", "holds"):
        t.add_column(c)
    for kind, c in rows:
        name = c["threshold_name"] or ""
        t.add_row(kind, f"{c['metric']} {c['op']} {c['threshold']:g}" + (f" ({name})" if name else ""),
                  "n/a" if c["value"] is None else f"{c['value']:g}", {True: "yes", False: "no", None: "unknown"}[c["holds"]])
    return t


def _evidence(ev: dict) -> Table:
    t = Table(title=ev["title"], title_justify="left", show_edge=False, header_style="bold", box=None, padding=(0, 1))
    for c in ev["columns"]:
        t.add_column(c)
    for r in ev["rows"]:
        t.add_row(*("" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v) for v in r))
    return t


def _recommendation(f: dict) -> Text:
    r = f["recommendation"]
    text = Text()
    if f["verdict"] == "insufficient-data":
        return text
    if f["verdict"] in ("affected", "at-risk"):
        text.append("upgrade: ", style="bold")
        text.append(r["upgrade"] + (f" (nearest: {', '.join(r['upgrade_to'])})" if r["upgrade_to"] else "") + "\n")
    if f["verdict"] in ("affected", "at-risk", "signature-without-known-bug"):
        for s in r["settings"]:
            text.append(f"• {s['setting']}: {s['value']}\n", style="bold")
            text.append(f"  why: {s['reason']}\n  risk: {s['risk']}\n")
    if r["other_causes"]:
        text.append("look at: ", style="bold")
        text.append(r["other_causes"])
    text.rstrip()
    return text
