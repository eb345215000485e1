"""Bad input to `advisor report` and `analyze --plots`: one line naming the file, exit 2."""

from __future__ import annotations

from tests.conftest import ROOT, SAMPLES
from tests.helpers import advisor, one_line_error

SAMPLE = str(SAMPLES / "hostile-names-ext4-v7-zstd.dat")


def test_missing_trace(tmp_path):
    missing = tmp_path / "nope.dat"
    assert str(missing) in one_line_error(advisor("report", str(missing), "-o", str(tmp_path / "r.html")))


def test_not_a_trace(tmp_path):
    line = one_line_error(advisor("report", str(ROOT / "README.md"), "-o", str(tmp_path / "r.html")))
    assert "README.md" in line


def test_output_in_a_missing_directory(tmp_path):
    out = tmp_path / "no" / "r.html"
    assert str(out) in one_line_error(advisor("report", SAMPLE, "-o", str(out)))


def test_unknown_problem(tmp_path):
    assert "unknown problem" in one_line_error(advisor("report", SAMPLE, "-o", str(tmp_path / "r.html"), "-p", "nope"))


def test_analyze_plots_draws_in_the_terminal():
    r = advisor("analyze", SAMPLE, "--plots")
    assert r.code == 0, r.err
    for title in ("dirty and writeback pages", "write throughput per device", "block IO latency", "writer stalls: 34"):
        assert title in r.out
    assert "\x1b[" not in r.out.split("dirty and writeback pages", 1)[1]  # no colour codes when not a terminal


def test_a_report_written_from_a_pipe_says_nothing_on_stderr(tmp_path):
    """The progress bar is for a terminal: on a pipe it would leave an empty line."""
    r = advisor("report", SAMPLE, "-o", str(tmp_path / "r.html"), "--no-replay")
    assert r.code == 0 and r.err == "", repr(r.err)
