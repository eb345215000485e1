"""Text captures give the same events and values as the trace.dat they were
printed from (the tracefs text files were read from the same ring buffer
before `trace-cmd extract` consumed it; the report texts were printed from
that trace.dat)."""

from __future__ import annotations

import json
import subprocess

import duckdb
import pytest

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor, one_line_error
from tests.parity.text_pairs import compare_text

TEXT_KINDS = ("tracefs-text", "trace_pipe-text", "report-text", "report-raw-text")
PAIRED = [m for m in samples() if m["kind"] in TEXT_KINDS and m.get("paired_with")]


@pytest.mark.parametrize("m", PAIRED, ids=[m["file"] for m in PAIRED])
def test_text_matches_its_trace_dat(m, store_of):
    precision = 1 if m["kind"] == "report-raw-text" else 1000
    res = compare_text(store_of(m["file"]), store_of(m["paired_with"]), precision)
    assert res.mismatches == [], "\n".join(res.mismatches[:30])
    assert res.events == m["event_count"]
    assert sum(res.compared_fields.values()) > 0
    if m["kind"] == "report-raw-text":
        # Raw output prints every field as name=value: nothing is left unchecked.
        assert not res.unchecked, dict(res.unchecked)


def test_trace_pipe_text_loads_every_line(store_of):
    m = next(m for m in samples("trace_pipe-text"))
    path = SAMPLES / m["file"]
    event_lines = sum(1 for line in path.read_text().splitlines() if line.strip() and not line.startswith("#"))
    with duckdb.connect(str(store_of(m["file"])), read_only=True) as con:
        n = con.execute("SELECT count(*) FROM events").fetchone()[0]
        bad = con.execute("SELECT count FROM parse_stats WHERE name = 'malformed_lines'").fetchone()[0]
        tgids = con.execute("SELECT count(tgid) FROM events").fetchone()[0]
    assert n == event_lines == m["event_count"]
    assert bad == 0
    assert tgids == n  # record-tgid was on: every line has its tgid


def _report(tmp_path, *options: str):
    """`trace-cmd report OPTIONS` of a sample, saved as users save it."""
    from tests.conftest import need_trace_cmd

    need_trace_cmd()
    out = tmp_path / ("report" + "".join(options).replace("-", "_") + ".txt")
    with out.open("w") as f:
        subprocess.run(["trace-cmd", "report", *options, str(SAMPLES / "tracefs-ext4.dat")], stdout=f, stderr=subprocess.DEVNULL, check=True)
    return out


def test_a_ts_diff_report_reads_as_the_plain_one(tmp_path):
    """`--ts-diff` adds "(+147)" before each event name: the same events come out."""
    counts = []
    for options in ((), ("--ts-diff",)):
        r = advisor("sql", "--format", "json", str(_report(tmp_path, *options)),
                    "SELECT count(*) AS n, count(DISTINCT event) AS types, sum(ts) AS ts FROM events")
        assert r.code == 0, r.err
        counts.append(json.loads(r.out))
    assert counts[0] == counts[1] and counts[0][0]["n"] == 2754


def test_a_latency_format_report_is_refused_naming_the_option(tmp_path):
    r = advisor("analyze", str(_report(tmp_path, "-l")))
    assert r.code == 2 and "trace-cmd report -l" in one_line_error(r)
