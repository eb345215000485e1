"""An event type recorded in two trace buffers (capture 32: block_rq_issue and
block_rq_complete in the top buffer and in instance "wa"): the ingest warns with the
counts `trace-cmd report` shows per buffer, and the views read one buffer's copy."""

from __future__ import annotations

import json
import re
import subprocess

from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES, need_trace_cmd
from tests.helpers import advisor

DOUBLED = "instance-doubled-ext4-v7-zstd.dat"
SINGLE = "instance-ext4-v7-zstd.dat"  # the same recipe, block events in the instance only


def _report_counts(name: str) -> dict[tuple[str, str], int]:
    """(buffer, event) → lines of `trace-cmd report`; an instance's lines start "wa: "."""
    need_trace_cmd()
    text = subprocess.run(["trace-cmd", "report", str(SAMPLES / name)], capture_output=True, text=True, check=True).stdout
    counts: dict[tuple[str, str], int] = {}
    for m in re.finditer(r"^(?:(\w+): )?\s*\S.*?\[\d+\]\s+[\d.]+: (\w+):", text, re.M):
        key = (m.group(1) or "top", m.group(2))
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_doubled_types_are_warned_with_each_buffers_count(store_of):
    counts = _report_counts(DOUBLED)
    with open_store(store_of(DOUBLED)) as con:
        rows = con.execute("SELECT name, count, description FROM parse_stats WHERE severity = 'warning' ORDER BY name").fetchall()
    assert [r[0] for r in rows] == ["in_two_buffers:block:block_rq_complete", "in_two_buffers:block:block_rq_issue"]
    for name, extra, description in rows:
        event = name.rsplit(":", 1)[1]
        top, wa = counts[("top", event)], counts[("wa", event)]
        assert top > 50 and wa > 50
        assert extra == top + wa - max(top, wa)
        assert f"(top {top}, instance wa {wa})" in description


def test_views_read_one_buffer(store_of):
    counts = _report_counts(DOUBLED)
    with open_store(store_of(DOUBLED)) as con:
        attach(con)
        assert con.execute("SELECT count(*) FROM block_rq_issue").fetchone()[0] == counts[("top", "block_rq_issue")] + counts[("wa", "block_rq_issue")]
        requests, from_instance = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE issue_ts IN (SELECT ts FROM block_rq_issue JOIN instance_events USING (id)) "
            "AND issue_ts NOT IN (SELECT ts FROM block_rq_issue WHERE id NOT IN (SELECT id FROM instance_events))) FROM block_requests").fetchone()
        assert requests == max(counts[("top", "block_rq_issue")], counts[("wa", "block_rq_issue")])
        assert from_instance == 0
        # Every issue paired once: no request is issued twice at one time and sector.
        assert con.execute("SELECT count(*) FROM (SELECT issue_ts, sector FROM block_requests GROUP BY ALL HAVING count(*) > 1)").fetchone()[0] == 0


def test_a_capture_without_doubled_types_has_no_warning(store_of):
    with open_store(store_of(SINGLE)) as con:
        assert con.execute("SELECT count(*) FROM parse_stats WHERE severity = 'warning'").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM instance_events").fetchone()[0] > 1000


def test_analyze_shows_the_warning():
    r = advisor("analyze", "--json", str(SAMPLES / DOUBLED))
    assert r.code in (0, 1), r.err
    warned = json.loads(r.out)["capture"]["warnings"]
    assert {w["name"] for w in warned} == {"in_two_buffers:block:block_rq_complete", "in_two_buffers:block:block_rq_issue"}
    plain = advisor("analyze", str(SAMPLES / DOUBLED))
    assert "block:block_rq_issue was recorded in 2 trace buffers" in plain.out


def test_report_shows_the_warning(tmp_path):
    out = tmp_path / "r.html"
    r = advisor("report", str(SAMPLES / DOUBLED), "-o", str(out))
    assert r.code == 0, r.err
    assert out.read_text().count("<th>warning</th><td>block:block_rq_") == 2
