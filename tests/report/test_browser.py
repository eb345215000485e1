"""The report opens in a real headless browser from disk: every chart rendered (the
page's own check: an SVG with a non-empty box and drawn elements), and a screenshot.
SCREENSHOT=path keeps the largest sample's screenshot (docs/report-screenshot.png)."""

from __future__ import annotations

import os
import re
import shutil

from tests.report import chromium
from tests.report.conftest import HOSTILE, LARGEST


def _charts_rendered(page):
    dom, log = chromium.dump_dom(page)
    figures = re.findall(r'<figure class="chart"[^>]*>', dom)
    assert figures, "no charts in the page"
    states = [re.search(r'data-rendered="(\w+)"', f) for f in figures]
    assert all(s and s.group(1) == "ok" for s in states), figures
    assert f'data-charts-rendered="{len(figures)}/{len(figures)}"' in dom
    # The page's script ran under its Content-Security-Policy (a refused script would not have marked the charts).
    assert "Uncaught" not in log
    return len(figures)


def test_largest_sample_renders_every_chart_and_screenshot(report_of, tmp_path):
    page = report_of(LARGEST)
    assert _charts_rendered(page) >= 7
    png = tmp_path / "report.png"
    chromium.screenshot(page, png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a page with charts, not a blank one
    if os.environ.get("SCREENSHOT"):
        shutil.copy(png, os.environ["SCREENSHOT"])


def test_hostile_sample_renders_every_chart(report_of):
    assert _charts_rendered(report_of(HOSTILE)) >= 7
