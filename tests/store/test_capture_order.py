"""The stored tables come back in capture order (timestamp, then the order in the file)
without an ORDER BY, and so do the blktrace views; the event views and `events` do not
sort (a sort in a view runs under every query over it, an aggregate too), on every sample."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from advisor.store import ingest
from tests.conftest import SAMPLES, samples

INGESTIBLE = ("trace.dat", "tracefs-text", "trace_pipe-text", "report-text", "report-raw-text",
              "blkparse-text", "blktrace-merged", "blktrace-stream")


def _inputs() -> dict[str, list[Path]]:
    """Sample → the files one ingest reads (a capture's blktrace device sets together)."""
    out: dict[str, list[Path]] = {m["file"]: [SAMPLES / m["file"]] for m in samples() if m["kind"] in INGESTIBLE}
    for m in samples("blktrace"):
        out.setdefault(m["file"].split(".")[0], []).append(SAMPLES / m["file"])
    return out


INPUTS = _inputs()


def _time_relations(con, schema: str) -> dict[str, str]:
    """Tables and views of `schema` with a ts and an id column (every event table,
    events, blk_events) -> the event's common id column (`common_id` where the event
    has a field `id`, e.g. sys_enter). One catalog query: a tracefs capture has
    thousands of (mostly empty) event tables."""
    cols: dict[str, set[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ?", [schema]
    ).fetchall():
        cols.setdefault(table, set()).add(column)
    return {
        v: "common_id" if "common_id" in c else "id"
        for v, c in sorted(cols.items())
        if "ts" in c and "id" in c
    }


def _inversions(con, relation: str, key: str) -> tuple[int, int]:
    """(rows, rows that come before their predecessor in an unordered scan)."""
    cols = con.execute(f"SELECT ts, {key} AS id FROM {relation}").fetchnumpy()
    ts, ids = np.asarray(cols["ts"]), np.asarray(cols["id"])
    before = (ts[1:] < ts[:-1]) | ((ts[1:] == ts[:-1]) & (ids[1:] < ids[:-1]))
    return len(ts), int(before.sum())


def _sorts(con, query: str) -> bool:
    plan = "\n".join(r[1] for r in con.execute(f"EXPLAIN {query}").fetchall())
    return "ORDER_BY" in plan or "Order By" in plan


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_stored_rows_in_capture_order(name, tmp_path, store_of):
    if len(INPUTS[name]) == 1 and INPUTS[name][0].name == name:
        store = store_of(name)  # the session's store of this sample, shared with other tests
    else:
        store = tmp_path / "s.duckdb"
        ingest(INPUTS[name], store)
    with duckdb.connect(str(store), read_only=True) as con:
        con.execute("SET threads = 4")  # the parallel scan that reorders rows when nothing orders them
        stored = _time_relations(con, "raw")
        views = _time_relations(con, "main")
        assert "events" in views or "blk_events" in views
        checked = 0
        for table, key in stored.items():
            if table == "blk_events":
                continue  # stored in the order blkparse reads the records; its view orders them by time
            n, bad = _inversions(con, f'raw."{table}"', key)
            assert bad == 0, f"raw.{table}: {bad} of {n} rows out of (ts, id) order"
            first = con.execute(f'SELECT {key}, ts FROM raw."{table}" LIMIT 5').fetchall()
            assert first == con.execute(f'SELECT {key}, ts FROM raw."{table}" ORDER BY ts, {key} LIMIT 5').fetchall()
            checked += n
        if "blk_events" in views:
            n, bad = _inversions(con, "blk_events", "id")
            assert bad == 0, f"blk_events: {bad} of {n} rows out of (ts, id) order"
            checked += n
        assert checked > 0
        if "io_requests" in {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}:
            ids = [r[0] for r in con.execute("SELECT id FROM io_requests").fetchall()]
            assert ids == sorted(ids)
        for view, key in views.items():
            if view == "blk_events":
                continue
            assert not _sorts(con, f'SELECT count(*) FROM "{view}"'), f"{view} sorts its rows"
            rows = con.execute(f'SELECT count(*), count(DISTINCT {key}) FROM "{view}"').fetchone()
            assert rows[0] == rows[1], f"{view}: an event twice"
            if view in stored:
                assert rows[0] == con.execute(f'SELECT count(*) FROM raw."{view}"').fetchone()[0]
                first = con.execute(f'SELECT {key}, ts FROM raw."{view}" LIMIT 5').fetchall()
                assert first == con.execute(f'SELECT {key}, ts FROM "{view}" ORDER BY ts, {key} LIMIT 5').fetchall()
