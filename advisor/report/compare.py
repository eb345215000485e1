"""`advisor report --compare`: two captures on one page, on shared axes: the diff
(capture facts, latency percentiles with their bootstrap intervals, rules side by side),
each operation's latency distribution before and after on one chart, and the two
incidents over time on one time axis (seconds since each capture's first event)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from advisor import __version__
from advisor.compare.distributions import DISTRIBUTIONS
from advisor.compare.document import document, measure
from advisor.report import svg
from advisor.report.charts import Chart, _log
from advisor.report.downsample import envelope, rate
from advisor.report.page import chart_figure, h, page, table
from advisor.report.series import Incident, incident
from advisor.rules import Rule
from advisor.store import open_store

SIDES = (("before", "tab:blue"), ("after", "tab:orange"))


def build_compare(before: tuple[Path, str], after: tuple[Path, str], rules: list[Rule]) -> str:
    runs = {"before": measure(*before, rules), "after": measure(*after, rules)}
    doc = document([runs["before"]], [runs["after"]])
    incidents = {}
    for side, (store, _) in (("before", before), ("after", after)):
        with open_store(store) as con:
            incidents[side] = incident(con)
    with svg.style():
        dist_charts = [c for c in (_cdf(d.name, d.text, runs) for d in DISTRIBUTIONS) if c is not None]
        time_charts = [c for c in (_dirty(incidents), _throughput(incidents)) if c is not None]
    sections = [
        _header(doc),
        _facts(doc),
        _distributions(doc, dist_charts),
        "<section id=\"incidents\"><h2>The two incidents over time</h2><p>One time axis: seconds since each capture's first event.</p>"
        + "".join(chart_figure(c) for c in time_charts) + "</section>",
        _rules(doc),
    ]
    return page(f"Writeback Advisor comparison: {doc['before'][0]} vs {doc['after'][0]}", sections)


def _header(doc: dict) -> str:
    return (f"<header><h1>Writeback Advisor comparison</h1><p class=\"source\">before: {h(doc['before'][0])}</p>"
            f"<p class=\"source\">after: {h(doc['after'][0])}</p><p class=\"generated\">writeback-advisor {h(__version__)}</p></header>")


def _short(v) -> str:
    if isinstance(v, list):
        return f"{len(v)}: " + ", ".join(str(x) for x in v[:8]) + (", ..." if len(v) > 8 else "")
    return "" if v is None else str(v)


def _facts(doc: dict) -> str:
    rows = [(f["fact"], _short(f["before"]), _short(f["after"]), f["limits"] or "") for f in doc["facts"]]
    return ("<section id=\"facts\"><h2>Capture facts</h2><p>Differences first: they limit the comparison.</p>"
            + table(("fact", "before", "after", "limits the comparison"), rows, "facts") + "</section>")


def _distributions(doc: dict, charts: list[Chart]) -> str:
    rows = []
    for d in doc["distributions"]:
        for c in d["changes"]:
            lo, hi = c["interval"]
            rows.append((d["name"], c["stat"], c["before"], c["after"], c["change"], f"{lo:+.4g} .. {hi:+.4g}",
                         "beyond noise" if c["flagged"] else "within noise"))
    return ("<section id=\"distributions\"><h2>Operation latencies</h2>"
            f"<p>{h(doc['method'])}.</p>" + table(("operations", "stat", "before", "after", "change", "95% interval", ""), rows, "diff")
            + "".join(chart_figure(c) for c in charts) + "</section>")


def _rules(doc: dict) -> str:
    rows = []
    for r in doc["rules"]:
        for m in r["metrics"]:
            if m["before"] is not None or m["after"] is not None:
                rows.append((r["rule"], ", ".join(r["verdict"]["before"]), ", ".join(r["verdict"]["after"]), m["metric"], m["before"], m["after"], m["change"]))
        if not any(m["before"] is not None or m["after"] is not None for m in r["metrics"]):
            rows.append((r["rule"], ", ".join(r["verdict"]["before"]), ", ".join(r["verdict"]["after"]), "", None, None, None))
    return ("<section id=\"rules\"><h2>Rules side by side</h2>"
            + table(("rule", "verdict before", "verdict after", "metric", "before", "after", "change"), rows, "rules") + "</section>")


def _cdf(name: str, text: str, runs: dict) -> Chart | None:
    """Both sides' durations as empirical CDFs on one log axis."""
    samples = {side: runs[side]["samples"][name] for side, _ in SIDES}
    if any(s.durations_ms is None for s in samples.values()) or not any(len(s.durations_ms) for s in samples.values()):
        return None
    fig = svg.figure(2.6)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    _log(ax.xaxis)
    ax.grid(True, alpha=0.3)
    for side, color in SIDES:
        v = np.maximum(samples[side].durations_ms, 1e-3)
        of = f" of {samples[side].of_all:,}" if samples[side].of_all is not None else ""
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=color, label=f"{side}: {len(v):,}{of}")
        else:
            ax.plot([], [], " ", label=f"{side}: none{of}")
    ax.set_xlabel("ms (log)")
    ax.set_ylabel("fraction of operations")
    ax.set_title(f"{name}: {text}", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return Chart(f"cdf-{name}", f"{name} latency, before and after", svg.to_svg(fig, f"cdf-{name}"),
                 "empirical distribution of every operation of each capture")


def _time_axes(incidents: dict[str, Incident]):
    fig = svg.figure(2.6)
    ax = fig.add_subplot()
    ax.set_xlim(0, max(i.span[1] for i in incidents.values()))
    ax.set_xlabel("seconds since each capture's first event")
    ax.grid(True, alpha=0.3)
    return fig, ax


def _dirty(incidents: dict[str, Incident]) -> Chart | None:
    if any(i.dirty is None for i in incidents.values()):
        return None
    fig, ax = _time_axes(incidents)
    notes = []
    for side, color in SIDES:
        inc = incidents[side]
        env = envelope(inc.dirty["t"], inc.dirty["nr_dirty"], inc.span)
        ax.step(env.t, env.hi, where="post", color=color, linewidth=1, label=f"{side}: dirty pages")
        notes.append(f"{side}: {env.note}")
    ax.set_ylabel("pages")
    ax.set_title("Dirty pages (writeback:global_dirty_state)", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return Chart("dirty", "Dirty pages, before and after", svg.to_svg(fig, "dirty"), "; ".join(notes))


def _throughput(incidents: dict[str, Incident]) -> Chart | None:
    if any(i.written is None for i in incidents.values()):
        return None
    fig, ax = _time_axes(incidents)
    notes = []
    for side, color in SIDES:
        inc = incidents[side]
        t, per_s, width = rate(inc.written["t"], inc.written["bytes"], inc.span)
        ax.step(t, per_s / 1e6, where="post", color=color, linewidth=1, label=f"{side}: all devices")
        notes.append(f"{side}: {len(inc.written['t']):,} write completions per {width * 1e3:.3g} ms bucket")
    ax.set_ylabel("MB/s written")
    ax.set_title("Write throughput (completions)", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return Chart("throughput", "Write throughput, before and after", svg.to_svg(fig, "throughput"), "; ".join(notes))
