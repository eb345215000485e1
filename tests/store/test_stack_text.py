"""Stack traces in text captures (`trace-cmd record -T`, or the `stacktrace` option in
tracefs): each stack event is followed by its callers, a line each. They belong to the
stack event (its `info`, the lines joined by newlines), not malformed lines that flagged
the whole capture as damaged."""

from __future__ import annotations

import subprocess

from advisor.store import ingest_trace, open_store
from tests.conftest import SAMPLES, need_trace_cmd
from tests.parity.tracecmd_report import stack_lines

SAMPLE = SAMPLES / "stacktrace-ext4-v7-zstd.dat"


def _stacks(store):
    with open_store(store) as con:
        infos = [r[0] for r in con.execute("SELECT info FROM kernel_stack ORDER BY id").fetchall()]
        damage = con.execute("SELECT name, count FROM parse_stats WHERE severity <> 'info' AND count > 0").fetchall()
        events = con.execute("SELECT count(*) FROM events").fetchone()[0]
        lines = con.execute("SELECT count FROM parse_stats WHERE name = 'lines'").fetchone()[0]
    return infos, damage, events, lines


def test_report_text_keeps_every_stack_with_its_event(tmp_path):
    need_trace_cmd()
    text = tmp_path / "stacktrace.report.txt"
    text.write_text(subprocess.run(["trace-cmd", "report", str(SAMPLE)], capture_output=True, text=True, check=True).stdout)
    ingest_trace(text, tmp_path / "s.duckdb")
    infos, damage, events, lines = _stacks(tmp_path / "s.duckdb")
    assert damage == [] and events == 1514
    assert lines == len(text.read_text().splitlines())  # the caller lines are read lines too
    printed = [[int(x.removeprefix("=> "), 16) for x in info.split("\n")[1:]] for info in infos]
    assert printed == stack_lines(SAMPLE)
    assert all(info.startswith("<stack trace >\n=> ") for info in infos)


def test_tracefs_text_names_the_stack_event(tmp_path):
    # The kernel's `trace` file with the stacktrace option: the stack event has no name.
    text = tmp_path / "trace.txt"
    text.write_text(
        "# tracer: nop\n"
        "              dd-7     [001] .....   230.859990: writeback_dirty_folio: bdi 7:0: ino=12 index=0\n"
        "              dd-7     [001] .....   230.859993: <stack trace>\n"
        " => __folio_mark_dirty\n"
        " => filemap_dirty_folio\n"
        "              dd-7     [001] .....   230.859999: writeback_dirty_folio: bdi 7:0: ino=12 index=1\n"
        " => not a caller of a stack event\n"
    )
    ingest_trace(text, tmp_path / "s.duckdb")
    infos, damage, events, lines = _stacks(tmp_path / "s.duckdb")
    assert lines == 7
    assert infos == ["<stack trace>\n=> __folio_mark_dirty\n=> filemap_dirty_folio"]
    assert events == 3 and damage == [("malformed_lines", 1)]
