"""ftrace text captures (tracefs `trace`, trace_pipe, `trace-cmd report` with and without
-R) go through analyze, replay and report without error, also with an event's lines cut
out: text keeps only the fields printed as key=value, and the views say what is missing."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor

TEXT = [m["file"] for m in samples() if m["kind"] in ("tracefs-text", "trace_pipe-text", "report-text", "report-raw-text")]


@pytest.mark.parametrize("sample", TEXT)
def test_analyze_replay_and_report(sample, tmp_path):
    path = str(SAMPLES / sample)
    r = advisor("analyze", path, "--json")
    assert r.code == 0, r.err
    assert {f["rule"] for f in json.loads(r.out)["findings"]} >= {"stable-page-wait", "sync-flusher-stall"}
    r = advisor("replay", path, "--json")
    assert r.code == 0, r.err
    r = advisor("report", path, "-o", str(tmp_path / "r.html"))
    assert r.code == 0, r.err


def test_without_an_event_the_finding_names_it(tmp_path):
    """The tracefs text without its folio_wait_writeback lines: the stable-pages finding
    still measures the writes and names the missing waits."""
    cut = tmp_path / "cut.trace.txt"
    cut.write_text("".join(l for l in (SAMPLES / "tracefs-ext4.trace.txt").read_text().splitlines(True)
                           if "folio_wait_writeback" not in l))
    r = advisor("analyze", str(cut), "--json", "-r", "stable-page-wait")
    assert r.code == 0, r.err
    f = json.loads(r.out)["findings"][0]
    assert f["metrics"]["write_count"] == 512
    assert "write_stall_count" in {u["metric"] for u in f["unmeasured"]}
    assert "writeback:folio_wait_writeback" in f["capture_command"]
    r = advisor("report", str(cut), "-o", str(tmp_path / "r.html"))
    assert r.code == 0, r.err


# Lines of tracefs `trace` saved with other trace_options (recorded with writeback and
# block_rq_* events enabled, a dd of 20 MiB with conv=fsync): no task, CPU or
# nanosecond time per event, so the error names the option to change.
_LAYOUTS = {
    "latency-format": ("# tracer: nop\n#\n# nop latency trace v1.1.5 on 6.18.44-fc-v657\n"
                       "kworker/-44        1..... 22407us#: block_rq_issue: 254,0 DS 4194304 () 38502400 + 8192 be,0,4 [kworker/1:1H]\n"
                       "  <idle>-0         1..s1. 23706us+: block_rq_complete: 254,0 DS () 38502400 + 8192 be,0,4 [0]\n"),
    "trace_options raw, hex": "# tracer: nop\n#\n44 1 16613519959038 type: 2104\n0 1 16613521587353 type: 2107\n",
    "nocontext-info": ("# tracer: nop\n#\nblock_rq_issue: 254,0 DS 4194304 () 38502400 + 8192 be,0,4 [kworker/1:1H]\n"
                       "block_rq_complete: 254,0 DS () 38502400 + 8192 be,0,4 [0]\n"),
}


@pytest.mark.parametrize("option", _LAYOUTS)
def test_text_saved_with_other_trace_options_names_the_option(option, tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text(_LAYOUTS[option])
    r = advisor("ingest", str(path))
    assert r.code == 2
    assert r.err.count("\n") == 1 and "trace.txt: line " in r.err and option in r.err, r.err
