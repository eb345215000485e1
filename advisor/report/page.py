"""The report as one self-contained HTML page: no network, no external file.

Every string that comes from a capture (task names, file names, device names, rule
evidence rows, the source path itself) goes through `h()` — HTML-escaped, quotes too,
because a process can be named `<script>alert(1)</script>`. Charts are inline SVG
(matplotlib escapes their text as XML). The page's one script, which marks each chart
rendered or not for people and for the browser test, runs under a Content-Security-
Policy that allows that script's hash and nothing else: even a string that escaped the
escaping could not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources

from advisor.display import ID_COLUMNS, capture_span, display_id, display_value, lost_any, lost_detail, named_columns
from advisor.report.charts import Chart
from advisor.rules import SEVERITY
from advisor.views.coverage import describe as coverage_text, describe_silent

_CHECK_SCRIPT = """
(function () {
  var figures = document.querySelectorAll('figure.chart'), ok = 0;
  figures.forEach(function (f) {
    var s = f.querySelector('svg'), box = null, rect = null, marks = 0;
    if (s) {
      try { box = s.getBBox(); } catch (e) { box = null; }
      rect = s.getBoundingClientRect();
      marks = s.querySelectorAll('path, rect, image, use, polyline, line').length;
    }
    var good = !!(box && rect && box.width > 0 && box.height > 0 && rect.width > 0 && marks > 0);
    f.setAttribute('data-rendered', good ? 'ok' : 'failed');
    if (good) { ok++; }
  });
  document.body.setAttribute('data-charts-rendered', ok + '/' + figures.length);
})();
"""


def h(value) -> str:
    """A value from the capture, as HTML text or attribute content."""
    return html.escape("" if value is None else str(value), quote=True)


#: Longest text a table cell shows; the tooltip holds up to TOOLTIP_CHARS more
#: (a capture can name a task or a file with 100,000 characters: the whole
#: value is in the store, `advisor sql`).
CELL_CHARS = 120
TOOLTIP_CHARS = 4096


def number(v) -> str:
    """A table cell: the value as people read it (advisor.display), escaped,
    a long text cut with its beginning in a tooltip."""
    text = display_value(v)
    if not isinstance(text, str) or len(text) <= CELL_CHARS:
        return h(text)
    tip = text[:TOOLTIP_CHARS] + (f"… ({len(text):,} characters)" if len(text) > TOOLTIP_CHARS else "")
    return f'<span title="{h(tip)}">{h(text[:CELL_CHARS])}…</span>'



def table(columns, rows, cls: str = "") -> str:
    head = "".join(f"<th>{h(c)}</th>" for c in columns)
    # Identifiers and timestamps without thousands separators: every evidence cell, and
    # the columns named as such in any other table (the tasks' pid).
    cells = [(lambda v: h(display_id(v))) if cls == "evidence" or c in ID_COLUMNS else number for c in columns]
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for cell, v in zip(cells, r)) + "</tr>" for r in rows)
    return f'<table class="{h(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def page(title: str, sections: list[str]) -> str:
    digest = base64.b64encode(hashlib.sha256(_CHECK_SCRIPT.encode()).digest()).decode()
    csp = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    css = resources.files("advisor.report").joinpath("report.css").read_text()
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{h(csp)}">'
        f"<title>{h(title)}</title><style>{css}</style></head>\n<body>\n"
        + "\n".join(sections)
        + f"\n<script>{_CHECK_SCRIPT}</script>\n</body></html>\n"
    )


def chart_figure(c: Chart) -> str:
    return (f'<figure class="chart" id="chart-{h(c.id)}" data-chart="{h(c.id)}"><h3>{h(c.title)}</h3>'
            f"{c.svg}<figcaption>{h(c.note)}</figcaption></figure>")


def capture_section(label: str, doc: dict, version: str) -> str:
    k, c = doc["kernel"], doc["capture"]
    rows = [
        ("source", ", ".join(c["sources"]) or label),
        ("kernel", f"{k['release'] or 'unknown'} (from {k['from']})"),
        ("capture", f"{c['format'] or 'blktrace'}, clock {c['clock'] or 'n/a'}"),
        ("events", f"{c['events']:,} events, {c['blk_events']:,} blktrace records"),
        ("time span", capture_span(c)),
        ("lost events", f"{c['lost_events']:,}{lost_detail(c)}" + (" — metrics undercount what happened" if lost_any(c) else "")),
    ]
    if c.get("cpu_coverage"):
        rows.append(("coverage", coverage_text(c["cpu_coverage"], c.get("ts_unit", "ns"))))
    if c.get("silent_cpus"):
        rows.append(("cpus", describe_silent(c["silent_cpus"])))
    rows += [("warning", w["description"]) for w in c.get("warnings", [])]
    if c["damaged"]:
        rows.append(("damaged", "; ".join(c["damage"]) or "yes: findings cover what could be read"))
    body = "".join(f"<tr><th>{h(a)}</th><td>{h(b)}</td></tr>" for a, b in rows)
    return (f"<header><h1>Writeback Advisor report</h1><p class=\"source\">{h(label)}</p>"
            f"<p class=\"generated\">writeback-advisor {h(version)}</p></header>"
            f"<section id=\"capture\"><h2>Capture</h2><table class=\"facts\">{body}</table></section>")


def findings_section(doc: dict) -> str:
    parts = ["<section id=\"findings\"><h2>Findings</h2>"]
    if not doc["findings"]:
        parts.append("<p>No rule ran.</p>")
    for f in sorted(doc["findings"], key=lambda f: (-SEVERITY[f["verdict"]], f["rule"])):
        parts.append(_finding(f))
    parts.append("</section>")
    return "".join(parts)


def _finding(f: dict) -> str:
    out = [f'<article class="finding verdict-{h(f["verdict"])}" id="finding-{h(f["rule"])}">',
           f'<h3><span class="verdict">{h(f["verdict"])}</span> {h(f["rule"])} — {h(f["title"])}</h3>',
           f"<p>{h(f['message'])}</p>"]
    if f["verdict"] == "not-applicable":
        out.append("</article>")
        return "".join(out)
    unmeasured = {u["metric"]: u for u in f["unmeasured"]}
    if any(v is not None for v in f["metrics"].values()):
        out.append(table(("metric", "value", "unit"), [(n, "not measurable" if n in unmeasured else v, f["metric_units"].get(n, ""))
                                                        for n, v in f["metrics"].items()], "metrics"))
    if unmeasured:
        items = "".join(f"<li><b>{h(u['metric'])}</b> ({h(u['text'])}): {h(u['why'])}</li>" for u in unmeasured.values())
        out.append(f'<p class="unmeasured"><b>not measurable from this capture:</b></p><ul class="unmeasured">{items}</ul>')
    if f["partial"]:
        items = "".join(f"<li><b>{h(u['metric'])}</b>: without {h(u['without'])}</li>" for u in f["partial"])
        out.append(f'<p class="unmeasured"><b>measured without part of what they read:</b></p><ul class="unmeasured">{items}</ul>')
    if (unmeasured or f["partial"]) and f["capture_command"]:
        out.append(f'<p class="recommendation"><b>record them with:</b> <code>{h(f["capture_command"])}</code></p>')
    checks = [("signature", c) for c in f["signature"]] + [("pattern", c) for c in f["pattern"]]
    if checks:
        out.append(table(("check", "condition", "value", "holds"),
                         [(kind, f"{c['metric']} {c['op']} {display_value(c['threshold'])}", c["value"],
                           {True: "yes", False: "no", None: "unknown"}[c["holds"]]) for kind, c in checks], "checks"))
    for ev in f["evidence"]:
        if ev["rows"]:
            out.append(f"<h4>{h(ev['title'])}</h4>" + table(*named_columns(ev["columns"], ev["rows"]), "evidence"))
            left_out = ev.get("total_rows", len(ev["rows"])) - len(ev["rows"])
            if left_out > 0:
                out.append(f'<p class="more">… {left_out:,} more rows (advisor analyze --limit N shows more)</p>')
    out.append(_recommendation(f))
    out.append("</article>")
    return "".join(out)


def _recommendation(f: dict) -> str:
    r = f["recommendation"]
    if f["verdict"] == "insufficient-data":
        return ""
    items = []
    if f["verdict"] in ("affected", "at-risk"):
        nearest = f" (nearest: {', '.join(r['upgrade_to'])})" if r["upgrade_to"] else ""
        items.append(f"<li><b>upgrade:</b> {h(r['upgrade'] + nearest)}</li>")
    if f["verdict"] in ("affected", "at-risk", "signature-without-known-bug"):
        for s in r["settings"]:
            items.append(f"<li><b>{h(s['setting'])}: {h(s['value'])}</b> — why: {h(s['reason'])}; risk: {h(s['risk'])}</li>")
    if r["other_causes"]:
        items.append(f"<li><b>look at:</b> {h(r['other_causes'])}</li>")
    return f'<ul class="recommendation">{"".join(items)}</ul>' if items else ""
