"""advisor report --compare: the dbench captures with stable_writes 0 and 1 on one page,
every chart rendered in headless chromium."""

from __future__ import annotations

import re

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error
from tests.report import chromium
from tests.report.test_browser import _charts_rendered

BEFORE = SAMPLES / "dbench-stable0-ext4-run1-v7-zstd.dat"
AFTER = SAMPLES / "dbench-stable1-ext4-run1-v7-zstd.dat"


def test_compare_report_puts_both_captures_on_shared_axes(tmp_path):
    page = tmp_path / "compare.html"
    r = advisor("report", str(BEFORE), "--compare", str(AFTER), "-o", str(page))
    assert r.code == 0, r.err
    html = page.read_text()
    assert f"before: {BEFORE}" in html and f"after: {AFTER}" in html
    ids = re.findall(r'<figure class="chart" id="chart-([\w-]+)"', html)
    assert {"cdf-fsync", "cdf-write", "cdf-write_stall", "cdf-block_d2c", "dirty", "throughput"} <= set(ids)
    # The changed setting's metric, flagged in the table: write_stall's fraction row.
    row = re.search(r"<tr><td>write_stall</td><td>fraction</td>.*?</tr>", html).group(0)
    assert "beyond noise" in row
    assert "before: none of 17,226" in html  # the stall CDF's legend: no stalls before
    assert _charts_rendered(page) == len(ids)
    png = tmp_path / "compare.png"
    chromium.screenshot(page, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_with_a_missing_capture_is_one_line(tmp_path):
    r = advisor("report", str(BEFORE), "--compare", str(tmp_path / "none.dat"), "-o", str(tmp_path / "x.html"))
    assert "none.dat" in one_line_error(r)
