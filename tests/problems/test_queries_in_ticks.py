"""Rule queries that need less of the clock than nanoseconds.

A query declares `clock = "any"` when its metrics depend only on the order of events
(counts, bytes, events inside another's window), and `clock = "steady"` when they
also compare durations with each other (the longest sync, a ratio of two medians).
The test of each declaration: the sample's store with its timestamps rewritten as a
clock in ticks would store them, and the query's row must come out unchanged.

* x86-tsc: 3 ticks per nanosecond plus an offset (a 3 GHz TSC): "steady" and "any"
  queries give the same row.
* counter: each distinct timestamp replaced by its rank (trace-cmd's `-C counter`
  counts events, not time): "any" queries give the same row.

Every other query (a duration in ms, a window of 1 s) would change, and the engine
leaves its metrics unmeasured on such a capture; the end-to-end checks show both.
"""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from advisor.rules import load_rules
from advisor.views import attach
from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli
from tests.helpers import one_file_store, one_line_error

# One affected lab capture per problem: each rule's queries find rows in its own.
CAPTURES = {
    "btrfs-delalloc-overflush": "lab-btrfs-delalloc-overflush-revert-run1-v7-zstd.dat",
    "btrfs-full-fsync-fallback": "lab-btrfs-full-fsync-fallback-revert-run1-v7-zstd.dat",
    "btrfs-snapshot-livelock": "lab-btrfs-snapshot-livelock-revert-run2-v7-zstd.dat",
    "stable-page-wait": "lab-stable-page-wait-revert-run1-v7-zstd.dat",
    "sync-flusher-stall": "lab-sync-flusher-stall-revert-run1-v7-zstd.dat",
}
RULES = {r.id: r for r in load_rules(bundled_only=True)}


@pytest.fixture(scope="module")
def store_of(tmp_path_factory):
    """store_of("x.dat") → a one-file store of the sample (its tables inside, rewritable)."""
    d = tmp_path_factory.mktemp("one-file-stores")

    def get(name: str):
        return one_file_store(SAMPLES / name, d / (name + ".duckdb"))

    return get


def _time_columns(con) -> list[tuple[str, str, str]]:
    """(schema, table, column) of every stored timestamp: `ts`, and the syscall spans'
    start_ts and end_ts."""
    return con.execute(
        "SELECT c.schema_name, c.table_name, c.column_name FROM duckdb_columns() c "
        "JOIN duckdb_tables() t USING (database_name, schema_name, table_name) "
        "WHERE c.database_name = current_database() AND c.data_type = 'BIGINT' "
        "AND (c.column_name = 'ts' OR c.column_name LIKE '%\\_ts' ESCAPE '\\')").fetchall()


def _retimed(store, out, clock: str):
    """A copy of `store` whose timestamps are `clock` ticks."""
    out.write_bytes(store.read_bytes())
    with duckdb.connect(str(out)) as con:
        cols = _time_columns(con)
        assert len(cols) > 10
        if clock == "x86-tsc":
            for schema, table, col in cols:
                con.execute(f'UPDATE "{schema}"."{table}" SET "{col}" = "{col}" * 3 + 1000003')
        else:
            union = " UNION ".join(f'SELECT "{c}" AS ts FROM "{s}"."{t}"' for s, t, c in cols)
            con.execute(f"CREATE TEMP TABLE ranks AS SELECT ts, dense_rank() OVER (ORDER BY ts) AS r "
                        f"FROM ({union}) WHERE ts IS NOT NULL")
            for schema, table, col in cols:
                con.execute(f'UPDATE "{schema}"."{table}" x SET "{col}" = ranks.r FROM ranks WHERE x."{col}" = ranks.ts')
        con.execute("UPDATE trace_info SET value = 'clock ticks' WHERE key = 'ts_unit'")
        con.execute("UPDATE trace_info SET value = ? WHERE key = 'clock'", [clock])
    return out


def _rows(store, rule, clocks: tuple[str, ...]) -> dict[int, tuple]:
    """Each query of `rule` declared with one of `clocks`, whose views the store fills: its row."""
    with duckdb.connect(str(store), read_only=True) as con:
        views = attach(con)
        return {i: con.execute(q.sql).fetchone() for i, q in enumerate(rule.queries)
                if q.clock in clocks and not views.unmet(q.needs, q.clock)}


def _same(a: tuple, b: tuple) -> bool:
    return all(x == y or (isinstance(x, float) and isinstance(y, float) and math.isclose(x, y, rel_tol=1e-9))
               for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("rule_id", sorted(CAPTURES))
@pytest.mark.parametrize("clock, declared", [("x86-tsc", ("any", "steady")), ("counter", ("any",))])
def test_a_query_declared_clock_free_gives_the_same_row_in_ticks(store_of, tmp_path, rule_id, clock, declared):
    rule = RULES[rule_id]
    store = store_of(CAPTURES[rule_id])
    before = _rows(store, rule, declared)
    after = _rows(_retimed(store, tmp_path / "ticks.duckdb", clock), rule, declared)
    assert before, f"{rule_id}: no query declared {declared} runs on {CAPTURES[rule_id]}"
    assert after.keys() == before.keys()
    assert any(v for row in before.values() for v in row), "every compared value is zero or NULL: the test shows nothing"
    changed = {i: (before[i], after[i]) for i in before if not _same(before[i], after[i])}
    assert not changed, f"{rule_id}: queries whose rows depend on the clock: {changed}"


def test_a_duration_changes_in_ticks(store_of, tmp_path):
    """The control: a query left at "ns" does change, so the comparison above can fail."""
    rule = RULES["btrfs-full-fsync-fallback"]
    store = store_of(CAPTURES[rule.id])
    ticks = _retimed(store, tmp_path / "tsc.duckdb", "x86-tsc")
    timed = next(q for q in rule.queries if q.clock == "ns" and "fsync_p99_ms" in q.sql)
    rows = []
    for s in (store, ticks):
        with duckdb.connect(str(s), read_only=True) as con:
            attach(con)
            rows.append(con.execute(timed.sql).fetchone())
    assert not _same(*rows)


def test_analyze_in_x86_tsc_counts_without_durations(store_of, tmp_path):
    """What analyze shows of the fsync capture in TSC cycles: the counts and the reclaim
    slowdown and the tail ratio (ratios of two quantiles) as in nanoseconds, no duration, and the pattern checked."""
    store = store_of(CAPTURES["btrfs-full-fsync-fallback"])
    ns = json.loads(run_cli("analyze", str(store), "--json", "--rule", "btrfs-full-fsync-fallback").out)["findings"][0]
    r = run_cli("analyze", str(_retimed(store, tmp_path / "tsc.duckdb", "x86-tsc")), "--json", "--rule", "btrfs-full-fsync-fallback")
    assert r.code in (0, 1), r.err
    (tsc,) = json.loads(r.out)["findings"]
    for name in ("fsync_count", "reclaim_events", "fsyncs_during_reclaim", "reclaim_fsync_slowdown", "large_file_fsyncs", "fsync_tail_ratio"):
        assert ns["metrics"][name] is not None and tsc["metrics"][name] == pytest.approx(ns["metrics"][name]), name
    for name in ("fsync_mean_ms", "fsync_p50_ms", "fsync_p99_ms", "fsync_max_ms"):
        assert ns["metrics"][name] is not None and tsc["metrics"][name] is None, name
        assert "x86-tsc clock ticks, not nanoseconds" in next(u["why"] for u in tsc["unmeasured"] if u["metric"] == name)
    assert tsc["pattern"] and all(c["holds"] is True for c in tsc["pattern"])
    assert [c["holds"] for c in tsc["signature"]] == [c["holds"] for c in ns["signature"]] == [True, True, True]
    assert tsc["verdict"] == ns["verdict"]


def test_analyze_in_counter_ticks_compares_no_durations(store_of, tmp_path):
    """A bare counter keeps the order only: the slowdown ratio, measured in TSC cycles, is not."""
    store = store_of(CAPTURES["btrfs-full-fsync-fallback"])
    r = run_cli("analyze", str(_retimed(store, tmp_path / "counter.duckdb", "counter")), "--json", "--rule", "btrfs-full-fsync-fallback")
    (f,) = json.loads(r.out)["findings"]
    assert f["metrics"]["fsync_count"] and f["metrics"]["reclaim_fsync_slowdown"] is None
    assert "counter clock ticks" in next(u["why"] for u in f["unmeasured"] if u["metric"] == "reclaim_fsync_slowdown")


def test_a_rule_file_with_an_unknown_clock_is_refused(tmp_path):
    src = (SAMPLES.parent / "advisor" / "problems" / "sync_flusher_stall" / "rule.toml").read_text()
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "sync-flusher-stall.toml").write_text(src.replace('clock = "any"', 'clock = "jiffies"', 1))
    r = run_cli("analyze", str(SAMPLES / "hostile-names-ext4-v7-zstd.dat"), "--rules-dir", str(rules))
    assert "clock 'jiffies' must be one of ns, steady, any" in one_line_error(r)
