"""A trace.dat v7 cut short by a few bytes: trace-cmd writes the strings section (the
other sections' names) last, after the CPU data's index, so the first bytes a short
copy loses are that section's. No event is lost, and `trace-cmd report` prints every
one; the ingest reads them all too, and says that the file is short (a warning in
parse_stats and on the ingest's summary), where it used to say nothing."""

from __future__ import annotations

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor

SAMPLE = SAMPLES / "fio-ext4-v7-zstd.dat"


def _ingest(path, store) -> tuple[str, dict[str, int], int]:
    r = advisor("ingest", str(path), "-o", str(store))
    assert r.code == 0, r.err
    with duckdb.connect(str(store), read_only=True) as con:
        warned = dict(con.execute("SELECT name, count FROM parse_stats WHERE severity = 'warning'").fetchall())
        events = con.execute("SELECT count(*) FROM events").fetchone()[0]
    return r.out, warned, events


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    out, warned, events = _ingest(SAMPLE, tmp_path_factory.mktemp("whole") / "s.duckdb")
    assert "strings_section_unread" not in warned and "cut short" not in out
    return events


@pytest.mark.parametrize("cut", [1, 40, 100])
def test_a_file_missing_its_last_bytes_says_so_and_keeps_every_event(cut, whole, tmp_path):
    data = SAMPLE.read_bytes()
    short = tmp_path / "short.dat"
    short.write_bytes(data[: len(data) - cut])
    out, warned, events = _ingest(short, tmp_path / "s.duckdb")
    assert warned.get("strings_section_unread") == 1
    text = " ".join(out.split())  # the summary folds long lines
    assert "cut short after its event data" in text and "left in the file" in text
    assert events == whole
