"""A trace.dat read on several threads (one merging the CPUs' events, the others decoding:
$WRITEBACK_ADVISOR_THREADS) gives the same store as one read on one thread: on every
trace.dat sample, every table and view has the same columns, types and rows, the same
parse statistics, and every table is still in capture order."""

from __future__ import annotations

import duckdb
import pytest

from advisor.store import ingest
from tests.conftest import SAMPLES, samples
from tests.store.test_capture_order import _inversions, _time_views
from tests.store.test_parts_equal_single_file import VOLATILE, _relations

TRACEDAT = sorted(m["file"] for m in samples("trace.dat"))


@pytest.mark.parametrize("name", TRACEDAT)
def test_threads_read_the_same_store(name, tmp_path, monkeypatch):
    stores = {}
    for threads in (1, 3):
        monkeypatch.setenv("WRITEBACK_ADVISOR_THREADS", str(threads))
        stores[threads] = tmp_path / f"t{threads}.duckdb"
        ingest([SAMPLES / name], stores[threads])
    con = duckdb.connect()
    con.execute(f"ATTACH '{stores[1]}' AS a (READ_ONLY); ATTACH '{stores[3]}' AS b (READ_ONLY)")
    relations = _relations(con, "a")
    assert relations == _relations(con, "b")
    for (schema, table), columns in relations.items():
        name_ = f'{schema}."{table}"'
        where = f" WHERE key NOT IN {VOLATILE}" if table == "trace_info" else ""
        cols = ", ".join(f'"{c}"' for c, _ in columns)
        n_a, n_b = (con.execute(f"SELECT count(*) FROM {db}.{name_}{where}").fetchone()[0] for db in ("a", "b"))
        assert n_a == n_b, f"{name_}: {n_a} rows read on one thread, {n_b} on three"
        diff = con.execute(
            f"SELECT count(*) FROM (SELECT {cols} FROM a.{name_}{where} EXCEPT ALL SELECT {cols} FROM b.{name_}{where})"
        ).fetchone()[0]
        assert diff == 0, f"{name_}: {diff} rows differ"
    con.close()
    with duckdb.connect(str(stores[3]), read_only=True) as con:
        for view, key in _time_views(con).items():
            n, bad = _inversions(con, view, key)
            assert bad == 0, f"{view}: {bad} of {n} rows out of (ts, id) order"


def test_a_bad_thread_count_is_a_usage_error(tmp_path, monkeypatch):
    from advisor.errors import UsageError

    monkeypatch.setenv("WRITEBACK_ADVISOR_THREADS", "zero")
    with pytest.raises(UsageError, match="WRITEBACK_ADVISOR_THREADS"):
        ingest([SAMPLES / TRACEDAT[0]], tmp_path / "s.duckdb")
