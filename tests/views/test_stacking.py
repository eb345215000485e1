"""A filesystem on a loop device shows its writes on the loop device and again on the
device under the backing file (views.stacking): the replay reads the loop device's
requests only and says which it left out; a device the writeback events do not name is
another filesystem's."""

from __future__ import annotations

from advisor.analyze.replay import FIDELITY_TOLERANCE, replay_store
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


def test_other_writes_on_the_disk_under_a_loop_device_are_said():
    """Each write of the loop device reaches the disk under its image once more; what the
    disk wrote beyond that is another filesystem's, sharing the disk."""
    c = choose({"7,0": 36, "254,0": 62}, ["7:0", "254:0"], {"7,0": 468_000_000, "254,0": 1_273_000_000})
    assert c.shared.startswith("254,0, the device under the loop device, wrote 805 MB beyond the 468 MB 7,0 sent")
    # The image file's own journal and metadata (under a tenth of the loop's bytes) are not another workload.
    assert choose({"7,0": 36, "254,0": 62}, ["7:0", "254:0"], {"7,0": 468_000_000, "254,0": 500_000_000}).shared == ""
    assert choose({"7,0": 36, "254,0": 62}, ["7:0", "254:0"]).shared == ""
    assert choose({"8,0": 5, "259,0": 9}, [], {"8,0": 1, "259,0": 10**9}).shared == ""


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


def test_a_mirror_under_md_counts_one_copy():
    """ext4 on /dev/md0 (9,0), a RAID1 of loop0 and loop1 over vda: md has no requests;
    its queued bios are the filesystem's bytes, and each member wrote all of them."""
    c = choose({"7,0": 107, "7,1": 107, "254,0": 363}, ["9:0", "7:0", "7:1", "254:0"],
               {"7,0": 72_382_464, "7,1": 72_382_464, "254,0": 145_821_696}, {"9,0": 72_375_296, "7,0": 72_375_296})
    assert c.kept == ("7,0",) and c.dropped == {"7,1": 107, "254,0": 363}
    assert "9,0 has no requests of its own" in c.note() and "(2.0×: mirrored or with parity), so one copy is counted" in c.note()
    assert "loop device" in c.note()


def test_striped_or_linear_md_keeps_every_device():
    c = choose({"8,0": 10, "8,16": 10}, ["9:0"], {"8,0": 500_000, "8,16": 520_000}, {"9,0": 1_000_000})
    assert c.kept == ("8,0", "8,16") and not c.dropped and c.note() == ""


def test_raid5_of_three_counts_two_devices():
    """Three members each writing half of the bytes plus parity: 1.5× rounds to 2 copies."""
    c = choose({"8,0": 9, "8,16": 9, "8,32": 9}, ["9:0"], {"8,0": 500, "8,16": 500, "8,32": 500}, {"9,0": 1000})
    assert len(c.kept) == 2 and len(c.dropped) == 1


def test_copies_on_one_disk_cannot_be_told_apart_and_say_so():
    """A mirror of two partitions of one disk: the requests name the disk, both copies on it."""
    c = choose({"254,0": 40}, ["9:0"], {"254,0": 2_000_000}, {"9,0": 1_000_000})
    assert c.kept == ("254,0",) and not c.dropped and c.where() is None
    assert "count each write more than once" in c.note()


def test_without_queued_bios_the_note_says_mirrors_may_count_twice():
    c = choose({"8,0": 10, "8,16": 10}, ["9:0"], {"8,0": 500, "8,16": 500}, None)
    assert c.kept == ("8,0", "8,16") and not c.dropped
    assert "once per copy if mirrored" in c.note() and "block:block_bio_queue" in c.note()


def test_a_network_filesystems_bdi_is_no_block_device():
    """NFS and FUSE bdis are "0:N": they have no requests anywhere, and are not md."""
    c = choose({"8,0": 10}, ["0:53", "8:0"], {"8,0": 500}, None)
    assert c.kept == ("8,0",) and c.note() == ""


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


def test_replay_leaves_the_backing_devices_pages_out_and_says_so(store_of):
    """The stacked capture's writeback events name 254:0 too (the host's root ext4, where
    the capture's own output went): its pages, inode writebacks and page waits are another
    filesystem's, never written by the loop device the replay models."""
    with open_store(store_of(STACKED)) as con:
        views = attach(con)
        by_bdi = dict(con.execute("SELECT bdi, count(*) FROM dirtying GROUP BY bdi").fetchall())
        assert set(by_bdi) == {"7:0", "254:0"}
        host_inodes = con.execute("SELECT count(DISTINCT ino) FROM dirtying WHERE bdi = '254:0'").fetchone()[0]
        rows = con.execute("SELECT count(*) FROM inode_writeback").fetchone()[0]
        kept = con.execute("SELECT count(*) FROM inode_writeback WHERE coalesce(bdi, dev) IS DISTINCT FROM '254:0'").fetchone()[0]
        assert kept < rows
        w = from_store(con, STACKED, views=views)
        assert len(w.dirty_ts) == by_bdi["7:0"]
        (note,) = [a for a in w.assumptions if "dirtying events of" in a]
        assert note.startswith(f"{by_bdi['254:0']:,} dirtying events of {host_inodes:,} inodes on bdi 254:0 left out")
        # The host disk took more than the loop device sent it: said, and kept for the replay's warnings.
        loop, host = (con.execute(f"SELECT sum(bytes) FROM block_requests WHERE write AND dev = '{d}'").fetchone()[0]
                      for d in ("7,0", "254,0"))
        assert w.shared_device.startswith(f"254,0, the device under the loop device, wrote {(host - loop) / 1e6:,.0f} MB beyond")
        assert w.shared_device in w.assumptions
        # The views are whole again afterwards.
        assert con.execute("SELECT count(*) FROM dirtying").fetchone()[0] == sum(by_bdi.values())
        assert con.execute("SELECT count(*) FROM inode_writeback").fetchone()[0] == rows


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


MIRROR = "md-raid1-ext4-v7-zstd.dat"


def test_replay_of_ext4_on_md_raid1_counts_one_copy(store_of):
    """The real capture: 48 MiB by dd, then sync; 16 MiB with fsync. Each member wrote every
    byte; the replay reads one member, and the sync writes the dd's bytes once."""
    with open_store(store_of(MIRROR)) as con:
        views = attach(con)
        members = dict(con.execute("SELECT dev, sum(bytes) FROM block_requests WHERE write AND dev IN ('7,0', '7,1') GROUP BY dev").fetchall())
        assert len(members) == 2
        w = from_store(con, MIRROR, views=views)
        one = con.execute("SELECT count(*) FROM block_requests WHERE dev = '7,0' AND write AND bytes > 0 AND complete_ts > issue_ts").fetchone()[0]
        assert w.device.requests == one
        (note,) = [a for a in w.assumptions if a.startswith("block requests of 7,0 only")]
        assert "9,0 has no requests of its own" in note and "so one copy is counted" in note
        queued = con.execute("SELECT sum(nr_sector) * 512 FROM block_bio_queue WHERE dev_major(dev) = 9 AND rwbs LIKE '%W%'").fetchone()[0]
        assert 0.95 < members["7,0"] / queued < 1.05 and 0.95 < members["7,1"] / queued < 1.05


def test_with_btrfs_the_devices_no_event_names_are_its_own():
    """btrfs on loop0 (7,0) beside the root ext4 on vda (254,0): the writeback events name
    254:0 only, the ext4's; btrfs's bdi (btrfs-1) names none, so loop0 is btrfs's. Without
    btrfs in the capture the named device is the filesystem's (the test above)."""
    c = choose({"7,0": 24_194, "254,0": 15_021}, ["254:0"], btrfs=True)
    assert c.kept == ("7,0",) and c.dropped == {"254,0": 15_021}
    assert "btrfs's writeback events name no block device" in c.note() and "254,0: another filesystem's" in c.note()
    # btrfs and ext4 on two partitions of one disk: the requests name the disk; it stays.
    c = choose({"254,0": 9}, ["254:0"], btrfs=True)
    assert c.kept == ("254,0",) and not c.dropped


def test_replay_names_the_shared_disk_among_its_errors_causes(store_of):
    with open_store(store_of(STACKED)) as con:
        doc = replay_store(con, STACKED)
    errors = [e["error"] for r in doc["results"] if r["own_kernel"] for e in r["own_kernel_error"].values()]
    # this small capture's 12 ms sync replays at 22 ms
    assert any(abs(e) > FIDELITY_TOLERANCE for e in errors), errors
    [said] = [w for w in doc["warnings"] if w.startswith("254,0, the device under the loop device")]
    assert said.endswith("part of these errors may come from those writes")
