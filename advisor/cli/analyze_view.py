"""The analysis for people, on stdout: kernel, capture quality, one section per rule."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from advisor.display import capture_span, display_value, lost_any, lost_detail, named_columns
from advisor.cli.console import more_rows, out, section, table, terminal
from advisor.rules import SEVERITY
from advisor.views.coverage import describe as coverage_text, describe_silent

STYLE = {
    "affected": "bold red",
    "at-risk": "bold yellow",
    "signature-without-known-bug": "bold magenta",
    "insufficient-data": "bold blue",
    "not-affected": "bold green",
    "not-applicable": "dim",
}


def render(doc: dict) -> None:
    out.print(_header(doc))
    for f in sorted(doc["findings"], key=lambda f: (-SEVERITY[f["verdict"]], f["rule"])):
        out.print(_panel(f))


def _header(doc: dict):
    k, c = doc["kernel"], doc["capture"]
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("kernel", f"{k['release'] or 'unknown'}  (from {k['from']}" + (", vendor kernel: backports possible)" if k["may_carry_backports"] else ")"))
    t.add_row("capture", f"{c['format'] or 'blktrace'}, clock {c['clock'] or 'n/a'}, {c['events']:,} events, {c['blk_events']:,} blktrace records")
    span = capture_span(c)
    t.add_row("time span", Text(span, style="bold red") if c.get("span_ticks") is not None else span)
    lost = Text(f"{c['lost_events']:,} lost events{lost_detail(c)}", style="bold red" if lost_any(c) else "green")
    if lost_any(c):
        lost.append("  metrics undercount what happened; re-capture with larger buffers (advisor capture)")
    t.add_row("quality", lost)
    if c.get("cpu_coverage"):
        t.add_row("coverage", Text(coverage_text(c["cpu_coverage"], c.get("ts_unit", "ns")), style="bold red"))
    if c.get("silent_cpus"):
        t.add_row("cpus", Text(describe_silent(c["silent_cpus"]), style="yellow"))
    if c.get("unknown_type_events"):
        t.add_row("unreadable", Text(f"{c['unknown_type_events']:,} more events of types the file has no format for (kept raw in "
                                     "unknown_events, read by no finding)", style="bold red"))
    for w in c.get("warnings", []):
        t.add_row("warning", Text(w["description"], style="bold yellow"))
    if c["damaged"]:
        where = f" ({c['damage'][0]})" if c.get("damage") else ""
        t.add_row("damaged", Text(f"part of the capture could not be read{where}: findings cover what was read (parse_stats counts what was skipped)", style="bold red"))
    return section(Text("capture", style="bold"), t)


def _panel(f: dict):
    parts: list = [Text(f["message"])]
    if f["verdict"] == "not-applicable":
        title = Text.assemble(("not-applicable", STYLE["not-applicable"]), "  ", (f["rule"], "bold"), f"  {f['title']}")
        return section(title, Group(*parts))
    if any(v is not None for v in f["metrics"].values()):
        parts.append(_metrics(f))
    if f["unmeasured"] or f["partial"]:
        parts.append(_unmeasured(f))
    checks = _checks(f)
    if checks is not None:
        parts.append(checks)
    for ev in f["evidence"]:
        if ev["rows"]:
            parts.append(_evidence(ev))
    parts.append(_recommendation(f))
    title = Text.assemble((f"{f['verdict']}", STYLE[f["verdict"]]), "  ", (f["rule"], "bold"), f"  {f['title']}")
    return section(title, Group(*parts), style=STYLE[f["verdict"]].split()[-1])


def _value(v, unit: str) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.3f}" if unit not in ("ratio",) else f"{v:.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _metrics(f: dict) -> Table:
    t = table("metric", "value", "unit", right=("value",), names=("metric", "value", "unit"))
    unmeasured = {u["metric"] for u in f["unmeasured"]}
    for name, v in f["metrics"].items():
        unit = f["metric_units"].get(name, "")
        t.add_row(name, "not measurable" if name in unmeasured else _value(v, unit), unit)
    return t


def _unmeasured(f: dict) -> Text:
    """What the capture lacks for each unmeasured metric, what a measured one was
    measured without, and the command that records it."""
    text = Text()
    if f["unmeasured"]:
        text.append("not measurable from this capture:\n", style="bold")
    for u in f["unmeasured"]:
        text.append(f"• {u['metric']}", style="bold")
        text.append(f" ({u['text']}): {u['why']}\n")
    if f["partial"]:
        text.append("measured without part of what they read:\n", style="bold")
    for u in f["partial"]:
        text.append(f"• {u['metric']}", style="bold")
        text.append(f": without {u['without']}\n")
    if f["capture_command"]:
        text.append("record them with: ", style="bold")
        text.append(f["capture_command"])
    else:
        text.rstrip()
    return text


def _checks(f: dict) -> Table | None:
    rows = [("signature", c) for c in f["signature"]] + [("pattern", c) for c in f["pattern"]]
    if not rows:
        return None
    t = table("check", "condition", "value", "holds", right=("value",), names=("value",))
    for kind, c in rows:
        name = c["threshold_name"] or ""
        t.add_row(kind, f"{c['metric']} {c['op']} {number(c['threshold'])}" + (f" ({name})" if name else ""),
                  "n/a" if c["value"] is None else number(c["value"]), {True: "yes", False: "no", None: "unknown"}[c["holds"]])
    return t


def number(v) -> str:
    """A check's value or threshold: 59,785,216 rather than 5.97852e+07, never an exponent."""
    return display_value(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _evidence(ev: dict):
    """An evidence table: ids and timestamps as the trace prints them (no separators),
    text columns (comm, ioctl and enum names) whole and never wrapped (a decoded value
    may wrap between its name and its number), numbers right-aligned. On a terminal headers wrap at their underscores so that the table fits."""
    rows = ev["rows"]
    columns, cells = named_columns(ev["columns"], rows)
    text_cols = {i for i, _ in enumerate(columns) if any(not c.replace(".", "").replace("-", "").isdigit() for c in (r[i] for r in cells) if c)}
    widest = [max((len(r[i]) for r in cells), default=0) for i in range(len(columns))]
    # On a terminal a header wider than its values goes on lines of its own words:
    # "pages_dirtied" over a 5-digit count is "pages" above "dirtied".
    heads = [c.replace("_", "\n") if terminal() and len(c) > widest[i] else c for i, c in enumerate(columns)]
    t = table(*heads, title=ev["title"], right=tuple(h for i, h in enumerate(heads) if i not in text_cols), names=tuple(h for i, h in enumerate(heads) if not any(" (" in r[i] for r in cells)))
    for r in cells:
        t.add_row(*r)
    left_out = ev.get("total_rows", len(rows)) - len(rows)
    return Group(t, more_rows(left_out)) if left_out > 0 else t


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
