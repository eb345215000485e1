"""Tables at 80 and 100 columns: no line wider than the terminal, no name cut, and every
abbreviated header named in full (with its unit) on a legend line under its table."""

from __future__ import annotations

import json
import re

import pytest
from rich.console import Console

from advisor.cli.fit import abbreviation, fit
from advisor.cli.console import table
from tests.conftest import SAMPLES
from tests.helpers import advisor

BTRFS = str(SAMPLES / "lab-btrfs-delalloc-overflush-stock-run1-v7-zstd.dat")
BLK = str(SAMPLES / "blk-ext4-fsync")
LEGEND = re.compile(r"^legend: (.*)$", re.M)


def test_long_headers_over_short_values_are_abbreviated_with_a_legend():
    t = table("metric", "observed", "wait-if-required*", "this kernel vs observed", right=("observed",),
              names=("metric",), short={"this kernel vs observed": "error"}, units={"this kernel vs observed": "%"})
    t.add_row("write_stall_max_ms", "19.53", "18.49", "-5%")
    fitted = fit(t, 50, t.units, t.short)
    headers = [c.header for c in t.columns]
    assert headers == ["metric", "observed", "wir*", "error"]
    assert fitted.legend.plain == "legend: error = this kernel vs observed (%); wir* = wait-if-required*"
    assert fitted.width <= 50


def test_a_cell_wraps_between_words_only_and_a_table_too_wide_is_printed_whole():
    t = table("state", "comm", names=("comm",))
    t.add_row("FLUSH_DELAYED_ITEMS_NR (1)", "kworker/u4:5")
    fitted = fit(t, 20, None, None)
    assert fitted.width == len("FLUSH_DELAYED_ITEMS_NR") + 2 + len("kworker/u4:5")  # wider than 20: nothing cut
    console = Console(width=20, file=None, record=True, force_terminal=False)
    with console.capture() as cap:
        console.print(t, crop=False)
    text = cap.get()
    assert "FLUSH_DELAYED_ITEMS_NR" in text and "kworker/u4:5" in text and fitted.legend is None


def test_abbreviations_are_unique_and_shorter():
    assert abbreviation("wait-if-required*", set()) == "wir*"
    assert abbreviation("avg active @Q", set()) == "aa@"
    assert abbreviation("flush-inodes", {"fi"}) == "fin"
    assert abbreviation("ret", set()) is None


def _lines_fit(text: str, width: int) -> None:
    for line in text.splitlines():
        if line.startswith(("policies:", "note:")):
            continue  # prose, soft-wrapped by the terminal
        assert len(line) <= width, (width, line)


def _legend_matches_headers(text: str) -> list[str]:
    """Every abbreviation a legend names heads a column of the table just above it."""
    abbreviations = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = LEGEND.match(line)
        if not m:
            continue
        # the table above: back to the blank line before its title (20 evidence rows can
        # wrap to two lines each at 80 columns)
        start = max((j for j in range(i) if not lines[j].strip()), default=0)
        above = "\n".join(lines[start:i])
        for entry in m.group(1).split("; "):
            short, _, full = entry.partition(" = ")
            assert full and re.search(rf"(^|\s){re.escape(short)}(\s|$)", above, re.M), (entry, above)
            abbreviations.append(short)
    return abbreviations


@pytest.mark.parametrize("width", [80, 100])
def test_replay_names_every_policy_and_metric_whole(width):
    r = advisor("replay", BTRFS, env={"COLUMNS": str(width)})
    assert r.code == 0, r.err
    doc = json.loads(advisor("replay", BTRFS, "--json").out)
    _lines_fit(r.out, width)
    for res in doc["results"]:
        assert re.search(rf"\s{re.escape(res['policy'])}\*?(\s|$)", r.out, re.M), res["policy"]
        for metric in res["metrics"]:
            assert re.search(rf"^{re.escape(metric)}\s", r.out, re.M), metric
    # "this kernel vs observed" over "+5%": whole where the table fits (100 columns), else
    # abbreviated and named in the legend (80)
    abbreviated = _legend_matches_headers(r.out)
    if width == 80:
        assert "error" in abbreviated and "legend: error = this kernel vs observed (%)" in r.out
    else:
        assert not abbreviated and re.search(r"^metric .* this kernel vs observed$", r.out, re.M)


@pytest.mark.parametrize("width", [80, 100])
def test_analyze_evidence_keeps_decoded_names_whole(width):
    r = advisor("analyze", BTRFS, env={"COLUMNS": str(width)})
    assert r.code in (0, 1), r.err
    doc = json.loads(advisor("analyze", BTRFS, "--json").out)
    _lines_fit(r.out, width)
    _legend_matches_headers(r.out)
    words = r.out.split()
    shown = 0
    for f in doc["findings"]:
        for ev in f["evidence"]:
            for row in ev["rows"][:20]:
                for column, value in zip(ev["columns"], row):
                    if isinstance(value, str) and value and (column.endswith("_name") or column == "comm"):
                        assert value in words, (column, value)
                        shown += 1
    assert shown > 20


@pytest.mark.parametrize("width", [80, 100])
def test_io_fits_and_names_every_process_whole(width):
    r = advisor("io", BLK, env={"COLUMNS": str(width)})
    assert r.code == 0, r.err
    _lines_fit(r.out, width)
    _legend_matches_headers(r.out)
    doc = json.loads(advisor("io", BLK, "--json").out)
    for p in doc["processes"][:20]:
        assert re.search(rf"^{re.escape(p['process'])}\s", r.out, re.M), p["process"]


def test_a_terminal_header_of_several_lines_wraps_rather_than_abbreviates():
    t = table("metric", "flush-inodes\n5.10-rc1 up to 5.11-rc4 (5.10 before 5.10.8)", names=("metric",))
    t.add_row("flush_space_count", "24")
    fitted = fit(t, 40, None, None)
    assert fitted.legend is None and t.columns[1].header.startswith("flush-inodes\n")
    assert t.columns[1].width >= len("flush-inodes") and fitted.width <= 40
