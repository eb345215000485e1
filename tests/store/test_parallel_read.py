"""A trace.dat read on several threads (one merging the CPUs' events, the others decoding:
$WRITEBACK_ADVISOR_THREADS) gives the same store as one read on one thread: on every
trace.dat sample, every table and view has the same columns, types and rows, the same
parse statistics, and every stored table is still in capture order."""

from __future__ import annotations

import duckdb
import pytest

from advisor.store import ingest
from tests.conftest import SAMPLES, samples
from tests.store.test_capture_order import _inversions, _time_relations
from tests.store.test_parts_equal_single_file import assert_same_stores

TRACEDAT = sorted(m["file"] for m in samples("trace.dat"))


@pytest.mark.parametrize("name", TRACEDAT)
def test_threads_read_the_same_store(name, tmp_path, monkeypatch):
    stores = {}
    for threads in (1, 3):
        monkeypatch.setenv("WRITEBACK_ADVISOR_THREADS", str(threads))
        stores[threads] = tmp_path / f"t{threads}.duckdb"
        ingest([SAMPLES / name], stores[threads])
    assert_same_stores(stores[1], stores[3], "read on one thread", "on three")
    with duckdb.connect(str(stores[3]), read_only=True) as con:
        for table, key in _time_relations(con, "raw").items():
            n, bad = _inversions(con, f'raw."{table}"', key)
            assert bad == 0, f"raw.{table}: {bad} of {n} rows out of (ts, id) order"


def test_a_bad_thread_count_is_a_usage_error(tmp_path, monkeypatch):
    from advisor.errors import UsageError

    monkeypatch.setenv("WRITEBACK_ADVISOR_THREADS", "zero")
    with pytest.raises(UsageError, match="WRITEBACK_ADVISOR_THREADS"):
        ingest([SAMPLES / TRACEDAT[0]], tmp_path / "s.duckdb")
