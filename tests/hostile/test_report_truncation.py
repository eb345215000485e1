"""A 100,000-character string from a capture (a task name, a program path)
is cut in the HTML report's tables: its beginning shown, more of it in a
tooltip, the whole value in the store."""

from __future__ import annotations

from advisor.report.page import CELL_CHARS, TOOLTIP_CHARS, table


def test_long_strings_are_cut_in_tables():
    long = "<x>" + "A" * 100_000
    html = table(["comm", "n"], [[long, 3], ["dd", 4]])
    assert len(html) < 2 * TOOLTIP_CHARS
    assert "A" * 100_000 not in html and "<x>" not in html
    assert f'title="&lt;x&gt;{"A" * (TOOLTIP_CHARS - 3)}… (100,003 characters)"' in html
    assert f'>&lt;x&gt;{"A" * (CELL_CHARS - 3)}…</span>' in html
    assert "<td>dd</td>" in html and "<td>4</td>" in html


def test_a_string_that_fits_is_whole():
    assert "<td>" + "b" * CELL_CHARS + "</td>" in table(["comm"], [["b" * CELL_CHARS]])
