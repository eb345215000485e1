"""The diff for people: differing capture facts first, then distributions, then rules."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from advisor.cli.analyze_view import STYLE
from advisor.cli.console import out, table


def render(doc: dict) -> None:
    out.print(Text.assemble(("before ", "bold"), ", ".join(doc["before"])))
    out.print(Text.assemble(("after  ", "bold"), ", ".join(doc["after"])))
    out.print(_facts(doc["facts"]))
    out.print(_distributions(doc["distributions"]))
    out.print(Text(f"noise: {doc['method']}", style="dim"))
    out.print(_rules(doc["rules"]))


def _value(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) if len(v) <= 6 else f"{len(v)} items: {', '.join(str(x) for x in v[:6])}, ..."
    return str(v)


def _facts(rows: list[dict]) -> Table:
    t = table("fact", "before", "after", "note", title="capture facts (differences limit the comparison)", names=("fact",))
    for r in rows:
        style = "bold red" if r["differs"] else "dim"
        prefix = "only here: " if r.get("only") else ""
        note = r["limits"] or ""
        if r["fact"] == "event_set" and not r["differs"]:
            t.add_row(Text(r["fact"], style=style), f"{len(r['before'])} events", "the same", "")
            continue
        t.add_row(Text(r["fact"], style=style), prefix + _value(r["before"]), prefix + _value(r["after"]), Text(note, style=style))
    return t


def _distributions(dists: list[dict]) -> Table:
    t = table("ms", "stat", "before", "after", "change", "95% interval", "", title="operation latencies",
              right=("before", "after", "change"), abbreviate=False)
    unmeasured = []
    for d in dists:
        if d["before"] is None or d["after"] is None:
            unmeasured.append(f"{d['name']} ({'; '.join(f'{side}: {why}' for side, why in d['unmeasured'].items())})")
            continue
        t.add_row(Text(d["name"], style="bold"), "count", f"{d['before']['count']:,}", f"{d['after']['count']:,}", "", "", "")
        for c in d["changes"]:
            flag = Text("beyond noise", style="bold red") if c["flagged"] else Text("within noise", style="dim")
            lo, hi = c["interval"]
            t.add_row("", c["stat"].removesuffix("_ms"), f"{c['before']:.3g}", f"{c['after']:.3g}",
                      f"{c['change']:+.3g}", f"{lo:+.3g} .. {hi:+.3g}", flag)
        if d["before"]["count"] or d["after"]["count"]:
            t.add_row("", "max", _value(d["before"]["max_ms"]), _value(d["after"]["max_ms"]), "", "", "")
    if unmeasured:
        t.caption = "not measured: " + "; ".join(unmeasured)
        t.caption_justify = "left"
    return t


def _rules(rules: list[dict]) -> Table:
    t = table("rule", "verdict before", "verdict after", "metrics that changed", title="rules", names=("rule",), abbreviate=False)
    for r in rules:
        vb, va = r["verdict"]["before"], r["verdict"]["after"]
        changed = []
        for m in r["metrics"]:
            if m["change"]:
                mark = " (beyond the runs' range)" if m["beyond_runs"] else ""
                changed.append(f"{m['metric']} {_value(m['before'])} -> {_value(m['after'])} {m['unit']}{mark}")
        for side in ("before", "after"):
            for rp in r["replay"][side]:
                if rp:
                    changed.append(f"replay {side}: {rp['metric']} {_value(rp['before'])} ({rp['before_policy']}) -> "
                                   f"{_value(rp['after'])} ({rp['after_policy']})")
        t.add_row(Text(r["rule"], style="bold" if r["verdict_changed"] else ""),
                  Text(", ".join(vb), style=STYLE.get(vb[0], "")), Text(", ".join(va), style=STYLE.get(va[0], "")),
                  "\n".join(changed))
    return t
