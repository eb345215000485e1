"""views.held: a view computed once for a block of reads gives the rows the view gives,
survives another attach inside the block, and is the view again after it."""

from __future__ import annotations

from advisor.store import open_store
from advisor.views import attach, held

ROWS = "SELECT * FROM block_requests ORDER BY ALL"


def _reads_table(con) -> bool:
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'block_requests'").fetchone()[0]
    return "held_block_requests" in sql


def _temp_tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}


def test_held_rows_equal_the_view(store_of):
    with open_store(store_of("fio-ext4-v7-zstd.dat")) as con:
        views = attach(con)
        want = con.execute(ROWS).fetchall()
        assert len(want) > 1000
        with held(con, views, "block_requests"):
            assert _reads_table(con)
            assert con.execute(ROWS).fetchall() == want
            # A nested block and a later attach (the replay attaches again) keep reading it;
            # the inner block does not drop what the outer one holds.
            with held(con, attach(con), "block_requests"):
                assert _reads_table(con)
            assert _reads_table(con)
            assert con.execute(ROWS).fetchall() == want
        assert not _reads_table(con)
        assert "held_block_requests" not in _temp_tables(con)
        assert con.execute(ROWS).fetchall() == want
        attach(con)
        assert not _reads_table(con)


def test_views_built_without_events_are_not_held(store_of):
    """Views built as if an event had not been recorded are not the capture's own: the
    held rows (all events) must not stand in for them."""
    with open_store(store_of("fio-ext4-v7-zstd.dat")) as con:
        cut = attach(con, hide=frozenset({"block:block_bio_queue"}))
        with held(con, cut, "block_requests"):
            assert not _reads_table(con)
            assert "held_block_requests" not in _temp_tables(con)
        views = attach(con)
        with held(con, views, "block_requests"):
            cut = attach(con, hide=frozenset({"block:block_bio_queue"}))
            assert not _reads_table(con)
            assert con.execute("SELECT count(*) FROM block_requests WHERE queue_ts IS NOT NULL").fetchone()[0] == 0
            attach(con)
            assert _reads_table(con)


def test_views_built_without_events_are_narrowed_and_restored(store_of):
    """A `where` narrows them as it narrows the capture's own views (the replay's devices
    under an ablation test), nested too, and each block gives back what it found."""
    with open_store(store_of("all-events-ext4-v7-zstd.dat")) as con:
        cut = attach(con, hide=frozenset({"block:block_bio_queue"}))
        every = con.execute(ROWS).fetchall()
        loop = [r for r in every if r[0] == "7,0"]
        assert 0 < len(loop) < len(every)
        with held(con, cut, "block_requests", where="dev = '7,0'"):
            assert con.execute(ROWS).fetchall() == loop and not _reads_table(con)
            with held(con, cut, "block_requests", where="write"):
                assert con.execute(ROWS).fetchall() == [r for r in loop if r[4]]
            assert con.execute(ROWS).fetchall() == loop
        assert con.execute(ROWS).fetchall() == every
        assert not any(t.startswith("hidden_narrowed_") for t in _temp_tables(con))


def test_view_without_rows_source_is_not_held(store_of):
    """A capture without block events: nothing to hold, the view stays as built."""
    with open_store(store_of("symbols-xfs-v7-zstd.dat")) as con:
        views = attach(con)
        assert not views.built["block_requests"].available
        with held(con, views, "block_requests"):
            assert not _reads_table(con)
