"""Strings from the trace are escaped everywhere in the HTML. The sample is a real
capture: writers named `<script>alert(1` (the kernel keeps 15 bytes of
`<script>alert(1)</script>`) and `Tom & "Jerry's"`, executed as
`.../hostile/<script>alert(1)</script>` (the full string, in sched_process_exec)."""

from __future__ import annotations

import re
import shutil

from tests.conftest import SAMPLES
from tests.helpers import advisor
from tests.report import chromium
from tests.report.conftest import HOSTILE

RAW = ("<script>alert(1", 'Tom & "Jerry', "<img src=x")


def test_trace_strings_are_escaped_in_every_place(report_of):
    page = report_of(HOSTILE).read_text()
    for raw in RAW:
        assert raw not in page
    assert page.count("<script") == 1  # the page's own check script
    # Each place a trace string lands: tasks table (comm, program), the stall chart's legend (SVG).
    assert "<td>&lt;script&gt;alert(1</td>" in page
    assert "hostile/&lt;script&gt;alert(1)&lt;/script&gt;</td>" in page
    assert "Tom &amp; &quot;Jerry&#x27;s&quot;" in page
    svg_legend = re.search(r'<figure class="chart" id="chart-stalls".*?</figure>', page, re.S).group(0)
    assert "&lt;script&gt;alert(1 (" in svg_legend


def test_hostile_file_name_is_escaped(tmp_path):
    # The source path is shown too: a capture file named like markup.
    trace = tmp_path / "<img src=x onerror=alert(2)>.dat"
    shutil.copy(SAMPLES / HOSTILE, trace)
    out = tmp_path / "r.html"
    r = advisor("report", str(trace), "-o", str(out), "--no-replay")
    assert r.code == 0, r.err
    page = out.read_text()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;.dat" in page


def test_browser_sees_one_script_and_the_names_as_text(report_of):
    dom, _ = chromium.dump_dom(report_of(HOSTILE))
    assert dom.count("<script") == 1
    assert "&lt;script&gt;alert(1" in dom
