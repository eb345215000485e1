"""A filesystem on a loop device shows its writes on the loop device and again on the
device under the backing file (views.stacking): the replay reads the loop device's
requests only and says which it left out; a device the writeback events do not name is
another filesystem's."""

from __future__ import annotations

from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach, held
from advisor.views.stacking import choose

# ext4 on /dev/loop0 (7,0), its image file on /dev/vda (254,0), every event recorded.
STACKED = "all-events-ext4-v7-zstd.dat"


def test_one_device_is_kept_whole():
    assert choose({"7,0": 10}, ["7:0"]).where() is None
    assert choose({}, []).where() is None


def test_loop_device_over_its_backing_device():
    c = choose({"7,0": 36, "254,0": 62}, ["7:0", "254:0"])
    assert c.kept == ("7,0",) and c.dropped == {"254,0": 62}
    assert c.where() == "dev IN ('7,0')"
    assert "254,0 (62 write requests)" in c.note() and "loop device" in c.note()


def test_btrfs_bdi_names_no_device_and_the_loop_device_is_kept():
    c = choose({"7,0": 5, "254,0": 9}, [])
    assert c.kept == ("7,0",) and c.dropped == {"254,0": 9}


def test_devices_the_writeback_events_name():
    """The filesystem on vda (254:0) is the one written back; loop0's writes are another's."""
    c = choose({"7,0": 5, "254,0": 9}, ["254:0"])
    assert c.kept == ("254,0",) and c.dropped == {"7,0": 5}
    assert "name no other block device" in c.note()


def test_two_unrelated_devices_without_names_are_both_kept():
    c = choose({"8,0": 5, "259,0": 9}, [])
    assert c.kept == ("259,0", "8,0") and not c.dropped and c.where() is None


def _write_devices(con) -> dict[str, int]:
    return dict(con.execute("SELECT dev, count(*) FROM block_requests WHERE write GROUP BY dev").fetchall())


def test_replay_fits_the_loop_device_only_and_says_so(store_of):
    with open_store(store_of(STACKED)) as con:
        views = attach(con)
        assert views.filesystems.other_bdis == ["254:0", "7:0"]
        before = _write_devices(con)
        assert set(before) == {"7,0", "254,0"}
        loop_requests = con.execute(
            "SELECT count(*) FROM block_requests WHERE dev = '7,0' AND write AND bytes > 0 AND complete_ts > issue_ts"
        ).fetchone()[0]
        # Inside a block that already holds the view (the report's), as on its own.
        for outer in (False, True):
            if outer:
                with held(con, views, "block_requests"):
                    w = from_store(con, STACKED, views=views)
                    assert _write_devices(con) == before
            else:
                w = from_store(con, STACKED, views=views)
            assert w.device.requests == loop_requests
            notes = [a for a in w.assumptions if a.startswith("block requests of 7,0 only")]
            assert len(notes) == 1 and f"254,0 ({before['254,0']:,} write requests)" in notes[0]
            assert _write_devices(con) == before
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
        assert not any(t.startswith(("held_", "narrowed_")) for t in tables)


def test_one_device_capture_is_unchanged(store_of):
    with open_store(store_of("fio-ext4-v7-zstd.dat")) as con:
        w = from_store(con, "fio", views=attach(con))
        assert not any(a.startswith("block requests of") for a in w.assumptions)
        assert w.device.requests == con.execute(
            "SELECT count(*) FROM block_requests WHERE write AND bytes > 0 AND complete_ts > issue_ts").fetchone()[0]


def test_rules_count_the_loop_devices_bytes_and_say_so(store_of):
    """The delalloc rule's whole-capture data bytes, run on the stacked ext4 capture as
    if it were any filesystem's: 7,0's writes only, and its message names what it left out."""
    import dataclasses

    from advisor.rules import load_rules
    from advisor.rules.engine import analyze

    rule = next(r for r in load_rules() if r.id == "btrfs-delalloc-overflush")
    # Its fallback query, from block requests (the first counts btrfs's extent_writepage).
    rule = dataclasses.replace(rule, filesystems=(), queries=tuple(q for q in rule.queries if list(q.needs) == ["block_requests"]))
    assert rule.queries
    with open_store(store_of(STACKED)) as con:
        views = attach(con)
        loop_data = con.execute("SELECT sum(bytes) FROM block_requests WHERE dev = '7,0' AND write AND NOT meta").fetchone()[0]
        every_data = con.execute("SELECT sum(bytes) FROM block_requests WHERE write AND NOT meta").fetchone()[0]
        assert 0 < loop_data < every_data
        (f,) = analyze(con, [rule], None, views)
        assert f.metrics["data_written_bytes"] == loop_data
        assert "Block requests of 7,0 only; left out: 254,0" in f.message
        assert _write_devices(con).keys() == {"7,0", "254,0"}
