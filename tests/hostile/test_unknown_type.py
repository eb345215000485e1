"""Events whose type id has no format in the file (here writeback_dirty_folio's id
1009 renamed 9009 in the events-format section of an uncompressed sample): kept raw in
unknown_events and counted as data loss; the ingest's event line and the analysis's
capture header say how many were recorded but cannot be read, where they used to show
only the readable count ("25,467 events", "0 lost events")."""

from __future__ import annotations

import json

import duckdb

from tests.conftest import SAMPLES
from tests.helpers import advisor

FORMAT = b"name: writeback_dirty_folio\nID: 1009\n"


def test_events_of_an_unknown_type_are_named_in_ingest_and_analyze(tmp_path):
    data = (SAMPLES / "snapshot-btrfs-v7-none.dat").read_bytes()
    assert data.count(FORMAT) == 1
    trace = tmp_path / "renamed.dat"
    trace.write_bytes(data.replace(FORMAT, FORMAT.replace(b"1009", b"9009")))
    store = tmp_path / "s.duckdb"
    r = advisor("ingest", str(trace), "-o", str(store))
    assert r.code == 0, r.err
    with duckdb.connect(str(store), read_only=True) as con:
        unknown = con.execute("SELECT count(*) FROM unknown_events WHERE type_id = 1009").fetchone()[0]
    assert unknown > 1000
    assert f"{unknown:,} more of types the file has no format for" in " ".join(r.out.split())
    doc = json.loads(advisor("analyze", str(store), "--json").out)
    assert doc["capture"]["unknown_type_events"] == unknown
    text = " ".join(advisor("analyze", str(store)).out.split())
    assert f"unreadable {unknown:,} more events of types the file has no format for" in text
