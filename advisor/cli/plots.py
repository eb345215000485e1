"""`advisor analyze --plots`: the incident's charts in the terminal (plotext), for a
server reached over ssh. Same data as the HTML report's charts (report/series.py),
drawn with characters on stdout (stderr with --json); colours only on a terminal."""

from __future__ import annotations

import numpy as np
import plotext as plt

from advisor.report.downsample import envelope, rate
from advisor.report.series import Incident

HEIGHT = 15


def render(inc: Incident, width: int, colour: bool = False) -> str:
    """Every chart the capture has data for, one after another, as text."""
    charts = [c for c in (_dirty(inc), _throughput(inc), _latency(inc), _stalls(inc)) if c]
    if inc.missing:
        charts.append("not in this capture: " + "; ".join(f"{k} (record {v})" for k, v in inc.missing.items()))
    return "\n".join(_draw(c, width, colour) if callable(c) else c for c in charts)


def _draw(plot, width: int, colour: bool) -> str:
    plt.clf()
    plt.plotsize(width, HEIGHT)
    plot()
    text = plt.build()
    return text if colour else plt.uncolorize(text)


def _time_axis(inc: Incident, title: str, ylabel: str) -> None:
    plt.xlim(*inc.span)
    plt.title(title)
    plt.xlabel("s since the capture's first event")
    plt.ylabel(ylabel)


def _dirty(inc: Incident):
    if inc.dirty is None:
        return None

    def plot():
        for key, name in (("nr_dirty", "dirty"), ("nr_writeback", "writeback")):
            env = envelope(inc.dirty["t"], inc.dirty[key], inc.span, buckets=200)
            plt.plot(env.t.tolist(), env.hi.tolist(), label=name, marker="braille")
        _time_axis(inc, "dirty and writeback pages (global_dirty_state, max per bucket)", "pages")

    return plot


def _throughput(inc: Incident):
    if inc.written is None:
        return None

    def plot():
        w = inc.written
        for dev in sorted(set(w["dev"])):
            sel = w["dev"] == dev
            t, per_s, _ = rate(w["t"][sel], w["bytes"][sel], inc.span, buckets=100)
            plt.plot(t.tolist(), (per_s / 1e6).tolist(), label=f"dev {dev}", marker="braille")
        _time_axis(inc, "write throughput per device", "MB/s")

    return plot


def _latency(inc: Incident):
    if inc.latency is None:
        return None

    def plot():
        ms = np.maximum(inc.latency["ms"], 1e-3)
        edges = np.logspace(np.log10(ms.min()), np.log10(ms.max()) + 1e-9, 25)
        counts, _ = np.histogram(ms, bins=edges)
        plt.bar([f"{e:.3g}" for e in edges[:-1]], counts.tolist(), width=0.8)
        p50, p99 = np.percentile(ms, [50, 99])
        plt.title(f"block IO latency, ms (log bins): median {p50:.3g}, p99 {p99:.3g}, max {ms.max():.3g}")
        plt.ylabel("requests")

    return plot


def _stalls(inc: Incident):
    if inc.stalls is None or not len(inc.stalls["t"]):
        return None

    def plot():
        st = inc.stalls
        plt.scatter(st["t"].tolist(), st["ms"].tolist(), marker="dot")
        _time_axis(inc, f"writer stalls: {len(st['t']):,} balance_dirty_pages pauses", "ms")

    return plot
