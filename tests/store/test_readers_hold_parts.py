"""A store's reader keeps its parts directory: a second ingest of the same capture that
replaces the catalog under it leaves the directory until the reader is done, and the
next ingest removes it. Before, two `advisor analyze` of one new capture started together
failed in most runs: "IO Error: No files found that match the pattern .../main%2ekallsyms.parquet"."""

from __future__ import annotations

import gc

from advisor.store import ingest_trace, open_store, parts
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "fio-ext4-v7-zstd.dat"
COUNT = "SELECT count(*) FROM block_rq_issue"


def test_a_replaced_store_stays_readable_until_its_reader_is_done(tmp_path):
    store = tmp_path / "s.duckdb"
    ingest_trace(SAMPLE, store)
    con = open_store(store)
    first = parts.read_by(con)
    want = con.execute(COUNT).fetchone()[0]
    assert want > 1000

    ingest_trace(SAMPLE, store)  # the catalog in place is now another directory's
    assert first.is_dir() and len(parts.directories(store)) == 2
    assert con.execute(COUNT).fetchone()[0] == want

    con.close()
    del con
    gc.collect()
    ingest_trace(SAMPLE, store)
    assert not first.is_dir()
    assert len(parts.directories(store)) == 1
