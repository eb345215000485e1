"""The report's charts of one incident, drawn by matplotlib as SVG. Charts of time share
one axis (seconds since the capture's first event, same width and margins), so the eye
can run down the page from a dirty-page peak to the IO that followed and the writer
that stalled."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import FuncFormatter

from advisor.report import svg
from advisor.report.downsample import envelope, rate
from advisor.report.series import Incident

# Above this many points a scatter becomes a heat map (one cell per time × latency bin).
SCATTER_MAX = 4000
# Tasks named in the stall chart's legend; the rest are "other tasks".
LEGEND_TASKS = 6


@dataclass
class Chart:
    id: str
    title: str
    svg: str
    note: str  # what is drawn and how it was reduced


def incident_charts(inc: Incident) -> list[Chart]:
    makers = (_dirty, _throughput, _latency_time, _latency_histogram, _spans, _stalls, _waits)
    with svg.style():
        return [c for c in (m(inc) for m in makers) if c is not None]


def _time_axes(inc: Incident, height_in: float = 2.6):
    fig = svg.figure(height_in)
    ax = fig.add_subplot()
    ax.set_xlim(*inc.span)
    ax.set_xlabel("seconds since the capture's first event")
    ax.grid(True, alpha=0.3)
    return fig, ax


# Mathtext is off (trace strings are labels), so log axes label ticks as plain numbers.
_PLAIN = FuncFormatter(lambda v, _pos: f"{v:g}")


def _log(axis) -> None:
    axis.set_major_formatter(_PLAIN)
    axis.set_minor_formatter(FuncFormatter(lambda v, _pos: ""))


def _legend(ax) -> None:
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _dirty(inc: Incident) -> Chart | None:
    d = inc.dirty
    if d is None:
        return None
    fig, ax = _time_axes(inc)
    notes = []
    top = 1.0
    for key, name in (("nr_dirty", "dirty pages"), ("nr_writeback", "pages under writeback")):
        env = envelope(d["t"], d[key], inc.span)
        ax.fill_between(env.t, env.lo, env.hi, step="post", alpha=0.35, linewidth=0)
        ax.step(env.t, env.hi, where="post", linewidth=1, label=name)
        notes.append(f"{name}: {env.note}")
        top = max(top, float(np.max(d[key])))
    # On a large machine the limits are far above what a short capture dirties: they are
    # named in the legend rather than squashing the curves to the floor.
    for key, name in (("background_thresh", "background threshold"), ("dirty_limit", "dirty limit")):
        level = float(np.median(d[key]))
        if level <= 3 * top:
            ax.axhline(level, linestyle="--", linewidth=1, color="gray" if key == "background_thresh" else "red", label=f"{name} {level:,.0f}")
            top = max(top, level)
        else:
            ax.plot([], [], " ", label=f"{name} {level:,.0f}\n(off scale)")
    ax.set_ylim(0, top * 1.1)
    ax.set_ylabel("pages")
    ax.set_title("Dirty and writeback pages (writeback:global_dirty_state)", loc="left")
    _legend(ax)
    return Chart("dirty", "Dirty and writeback pages", svg.to_svg(fig, "dirty"), "; ".join(notes))


def _throughput(inc: Incident) -> Chart | None:
    w = inc.written
    if w is None:
        return None
    fig, ax = _time_axes(inc)
    width = 0.0
    for dev in sorted(set(w["dev"])):
        sel = w["dev"] == dev
        t, per_s, width = rate(w["t"][sel], w["bytes"][sel], inc.span)
        ax.step(t, per_s / 1e6, where="post", linewidth=1, label=f"device {svg.label(dev)}")
    ax.set_ylabel("MB/s written")
    ax.set_title(f"Write throughput per device ({w['source']}, completions)", loc="left")
    _legend(ax)
    note = f"{len(w['t']):,} write completions, bytes summed per {width * 1e3:.3g} ms bucket"
    return Chart("throughput", "Write throughput per device", svg.to_svg(fig, "throughput"), note)


def _latency_time(inc: Incident) -> Chart | None:
    lat = inc.latency
    if lat is None:
        return None
    fig, ax = _time_axes(inc, 3.0)
    ms = np.maximum(lat["ms"], 1e-3)
    ax.set_yscale("log")
    _log(ax.yaxis)
    ax.set_ylabel("latency, ms (log)")
    if len(ms) <= SCATTER_MAX:
        for write, name in ((False, "reads"), (True, "writes")):
            sel = lat["write"] == write
            if sel.any():
                ax.scatter(lat["t"][sel], ms[sel], s=4, alpha=0.6, linewidths=0, label=name)
        _legend(ax)
        note = f"all {len(ms):,} requests, one dot each"
    else:
        # iowatcher/seekwatcher-style: requests counted per (time, log-latency) cell.
        ybins = np.logspace(np.log10(ms.min()), np.log10(ms.max()) + 1e-9, 60)
        counts, xe, ye = np.histogram2d(lat["t"], ms, bins=(400, ybins), range=(inc.span, (ybins[0], ybins[-1])))
        masked = np.ma.masked_equal(counts.T, 0)
        mesh = ax.pcolormesh(xe, ye, masked, cmap="viridis", rasterized=True)
        fig.colorbar(mesh, ax=ax, pad=0.01, fraction=0.04, label="requests")
        note = f"heat map: {len(ms):,} requests counted in 400 time × 59 latency cells (too many for one dot each)"
    ax.set_title(f"Block IO latency over time ({lat['source']})", loc="left")
    return Chart("latency", "Block IO latency over time", svg.to_svg(fig, "latency"), note)


def _latency_histogram(inc: Incident) -> Chart | None:
    lat = inc.latency
    if lat is None:
        return None
    fig = svg.figure(2.6)
    ax = fig.add_subplot()
    ms = np.maximum(lat["ms"], 1e-3)
    bins = np.logspace(np.log10(ms.min()), np.log10(ms.max()) + 1e-9, 50)
    for write, name in ((False, "reads"), (True, "writes")):
        sel = lat["write"] == write
        if sel.any():
            ax.hist(ms[sel], bins=bins, alpha=0.6, label=f"{name} ({int(sel.sum()):,})")
    ax.set_xscale("log")
    _log(ax.xaxis)
    ax.set_xlabel("latency, ms (log)")
    ax.set_ylabel("requests")
    ax.grid(True, alpha=0.3)
    p50, p99 = np.percentile(ms, [50, 99])
    ax.set_title(f"Block IO latency histogram — median {p50:.3g} ms, p99 {p99:.3g} ms, max {ms.max():.3g} ms", loc="left")
    _legend(ax)
    return Chart("latency-histogram", "Block IO latency histogram", svg.to_svg(fig, "latency-histogram"), "49 log-spaced bins")


def _spans(inc: Incident) -> Chart | None:
    if not inc.spans:
        return None
    kinds = list(dict.fromkeys(s["kind"] for s in inc.spans))
    fig, ax = _time_axes(inc, 1.0 + 0.35 * len(kinds))
    end_of_capture = inc.span[1]
    for row, kind in enumerate(kinds):
        done = [(s["start"], s["end"] - s["start"]) for s in inc.spans if s["kind"] == kind and s["end"] is not None]
        open_ = [(s["start"], end_of_capture - s["start"]) for s in inc.spans if s["kind"] == kind and s["end"] is None]
        ax.broken_barh(done, (row - 0.35, 0.7), color=f"C{row % 10}")
        if open_:
            ax.broken_barh(open_, (row - 0.35, 0.7), facecolor="none", edgecolor=f"C{row % 10}", hatch="//")
    ax.set_yticks(range(len(kinds)), [svg.label(k) for k in kinds])
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    ax.invert_yaxis()
    ax.set_title("sync / fsync / snapshot / flusher operations (hatched: still running when the capture ended)", loc="left")
    counts = Counter(s["kind"] for s in inc.spans)
    note = ", ".join(f"{n:,} {k}" for k, n in counts.items()) + "; each operation drawn at least 1 pixel wide"
    for bar in ax.collections:
        bar.set_linewidth(0.6)  # a 10 µs fsync still shows as a sliver
    return Chart("spans", "Sync, fsync, snapshot and flush operations", svg.to_svg(fig, "spans"), note)


def _stalls(inc: Incident) -> Chart | None:
    st = inc.stalls
    if st is None or not len(st["t"]):
        return None
    fig, ax = _time_axes(inc)
    tasks = [c for c, _ in Counter(zip(st["comm"], st["pid"])).most_common(LEGEND_TASKS)]
    shown = np.zeros(len(st["t"]), dtype=bool)
    for comm, pid in tasks:
        sel = (st["comm"] == comm) & (st["pid"] == pid)
        shown |= sel
        ax.scatter(st["t"][sel], st["ms"][sel], s=8, alpha=0.7, linewidths=0, label=f"{svg.label(comm, 24)} ({pid})")
    if (~shown).any():
        ax.scatter(st["t"][~shown], st["ms"][~shown], s=8, alpha=0.5, linewidths=0, color="gray", label="other tasks")
    ax.set_ylabel("pause, ms")
    ax.set_ylim(bottom=0)
    ax.set_title("Writer stalls: balance_dirty_pages() pauses per task", loc="left")
    _legend(ax)
    total = float(st["ms"].sum())
    note = f"{len(st['t']):,} pauses, {total:,.0f} ms in all; one dot each"
    return Chart("stalls", "Writer stalls (balance_dirty_pages)", svg.to_svg(fig, "stalls"), note)


def _waits(inc: Incident) -> Chart | None:
    wt = inc.waits
    if wt is None or not len(wt["t"]):
        return None
    fig, ax = _time_axes(inc)
    t, per_s, width = rate(wt["t"], np.ones(len(wt["t"])), inc.span)
    ax.step(t, per_s, where="post", linewidth=1, label=f"all tasks ({len(wt['t']):,})")
    ax.set_ylabel("waits per second")
    ax.set_title("Writers waiting on page writeback (folio_wait_writeback)", loc="left")
    _legend(ax)
    note = f"{len(wt['t']):,} waits counted per {width * 1e3:.3g} ms bucket"
    return Chart("waits", "Waits on page writeback", svg.to_svg(fig, "waits"), note)
