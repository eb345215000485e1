"""matplotlib figures as SVG fragments to inline in an HTML page.

Text stays text (`svg.fonttype: none`: smaller files, selectable, and matplotlib's SVG
writer escapes it as XML); labels from the trace are never parsed as mathtext (a task
named `$x$` stays `$x$`); each chart gets its own id salt so the clip-path ids of two
charts on one page differ; no date in the metadata, so one capture gives one file.
"""

from __future__ import annotations

import contextlib
import io

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402 - after choosing the backend

#: Every time chart has the same width and plot margins, so their time axes line up.
WIDTH_IN = 11.0
MARGINS = dict(left=0.075, right=0.78, top=0.88, bottom=0.2)


@contextlib.contextmanager
def style():
    """Build charts inside this: matplotlib reads `text.parse_math` when a text is made."""
    with matplotlib.rc_context({"svg.fonttype": "none", "text.parse_math": False, "font.size": 9}):
        yield


def figure(height_in: float = 2.6) -> Figure:
    fig = Figure(figsize=(WIDTH_IN, height_in))
    fig.subplots_adjust(**MARGINS)
    return fig


def to_svg(fig: Figure, chart_id: str) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": chart_id}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    # Drop the XML declaration and DOCTYPE: inside HTML the <svg> element stands alone.
    return text[text.index("<svg"):]


def label(text: object, limit: int = 40) -> str:
    """A trace string as a chart label: one line, bounded length."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
