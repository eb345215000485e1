"""`advisor cache`: list, size and clear the cached stores; the optional size cap."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error

SMALL = ["hostile-names-ext4-v7-zstd.dat", "fsync-reclaim-btrfs-v7-zstd.dat", "lost-events-v7-zstd.dat"]


@pytest.fixture()
def cache(tmp_path):
    """A cache holding three stores, ingested a second apart (oldest first), and a file
    of the user's that is not a store."""
    d = tmp_path / "cache"
    env = {"WRITEBACK_ADVISOR_CACHE": str(d)}
    for i, name in enumerate(SMALL):
        r = advisor("ingest", str(SAMPLES / name), "--json", env=env)
        assert r.code == 0, r.err
        store = json.loads(r.out)["store"]
        os.utime(store, (time.time() - 100 + i, time.time() - 100 + i))
    (d / "notes.txt").write_text("mine")
    return d, env


def _listing(env) -> dict:
    r = advisor("cache", "list", "--json", env=env)
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_list_and_size_count_every_store_and_nothing_else(cache):
    d, env = cache
    doc = _listing(env)
    files = sorted(d.glob("*.duckdb"))
    assert len(doc["stores"]) == 3 == len(files)
    # A store is its DuckDB catalog and its directory of Parquet tables.
    parts = [p for f in files for pd in d.glob(f.name + ".*.parts") for p in pd.iterdir()]
    assert parts and doc["bytes"] == sum(f.stat().st_size for f in files + parts)
    assert [s["kernel"] for s in doc["stores"]] and all(s["events"] > 0 for s in doc["stores"])
    size = json.loads(advisor("cache", "size", "--json", env=env).out)
    assert size == {"directory": str(d), "stores": 3, "bytes": doc["bytes"], "orphaned_parts": 0}
    text = advisor("cache", env=env)  # no subcommand: the list
    assert text.code == 0 and "3 stores" in text.out and text.err == ""
    for f in files:
        assert f.name in text.out


def test_clear_keep_removes_the_least_recently_ingested_first(cache):
    d, env = cache
    stores = _listing(env)["stores"]
    keep = stores[-1]["bytes"] + stores[-2]["bytes"]
    r = advisor("cache", "clear", "--keep", str(keep), "--json", env=env)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["removed"] == [stores[0]["store"]] and doc["bytes_left"] == keep
    assert [s["store"] for s in _listing(env)["stores"]] == [s["store"] for s in stores[1:]]


def test_clear_older_than_and_clear_all(cache):
    d, env = cache
    assert json.loads(advisor("cache", "clear", "--older-than", "1", "--json", env=env).out)["removed"] == []
    r = advisor("cache", "clear", env=env)
    assert r.code == 0 and r.out.startswith("removed 3 stores")
    assert list(d.glob("*.duckdb")) == [] and list(d.glob("*.parts")) == [] and (d / "notes.txt").read_text() == "mine"
    # A cleared store is rebuilt on next use.
    r = advisor("sql", str(SAMPLES / SMALL[0]), "select count(*) from events", "--format", "csv", env=env)
    assert r.code == 0 and len(list(d.glob("*.duckdb"))) == 1


def test_the_size_cap_applies_after_a_command(cache):
    d, env = cache
    stores = _listing(env)["stores"]
    cap = stores[-1]["bytes"] + 1
    r = advisor("cache", "size", env={**env, "WRITEBACK_ADVISOR_CACHE_MAX": str(cap)})
    assert r.code == 0, r.err
    assert [s["store"] for s in _listing(env)["stores"]] == [stores[-1]["store"]]


def test_bad_sizes_are_usage_errors(cache):
    _, env = cache
    assert "not a size" in one_line_error(advisor("cache", "clear", "--keep", "lots", env=env))
    assert "WRITEBACK_ADVISOR_CACHE_MAX" in one_line_error(advisor("cache", "size", env={**env, "WRITEBACK_ADVISOR_CACHE_MAX": "x"}))


def test_parts_whose_store_was_removed_are_counted_and_cleared(cache):
    """A store file removed by hand leaves its Parquet parts directory and its checksum:
    size and list count them, and clear removes them (they used to stay, uncounted, for
    good)."""
    d, env = cache
    before = _listing(env)
    gone = d / before["stores"][0]["store"].rsplit("/", 1)[1]
    parts_dirs = list(d.glob(gone.name + ".*.parts"))
    checksum = d / (gone.name + ".blake3")
    assert len(parts_dirs) == 1 and checksum.is_file()
    orphan_bytes = sum(p.stat().st_size for p in parts_dirs[0].iterdir())
    checksum_bytes = checksum.stat().st_size
    gone.unlink()
    doc = _listing(env)
    assert len(doc["stores"]) == 2
    assert doc["orphaned_parts"] == sorted([{"path": str(parts_dirs[0]), "bytes": orphan_bytes},
                                            {"path": str(checksum), "bytes": checksum_bytes}], key=lambda o: o["path"])
    assert doc["bytes"] == before["bytes"] - gone_bytes(before, gone) + orphan_bytes + checksum_bytes
    size = json.loads(advisor("cache", "size", "--json", env=env).out)
    assert size["orphaned_parts"] == 2 and size["bytes"] == doc["bytes"]
    text = advisor("cache", "list", env=env)
    assert "1 parts directory and 1 checksum or log file whose store was removed" in text.out
    r = advisor("cache", "clear", "--keep", "1G", "--json", env=env)
    assert r.code == 0, r.err
    assert json.loads(r.out)["bytes_freed"] == orphan_bytes + checksum_bytes
    assert not parts_dirs[0].exists() and not checksum.exists()
    assert len(_listing(env)["stores"]) == 2 and _listing(env)["orphaned_parts"] == []


def test_a_checksum_is_not_stray_while_its_store_is_being_written(tmp_path):
    """An ingest writes the checksum just before it renames the store into place: while
    a writer of that store holds its lock, the checksum is not counted or removed."""
    from advisor.store import cache_admin, replace  # noqa: PLC0415

    store = tmp_path / ("0" * 32 + "-p1.0-s1.duckdb")
    checksum = tmp_path / (store.name + ".blake3")
    checksum.write_text("x\n")
    lock = replace.take_lock(tmp_path / f".{store.name}.123-abcd.tmp.lock")
    try:
        assert cache_admin.orphans(tmp_path) == []
        assert cache_admin.remove_orphans(tmp_path) == 0 and checksum.exists()
    finally:
        os.close(lock)
    assert cache_admin.orphans(tmp_path) == [(checksum, 2)]
    assert cache_admin.remove_orphans(tmp_path) == 2 and not checksum.exists()


def gone_bytes(listing: dict, store) -> int:
    return next(s["bytes"] for s in listing["stores"] if s["store"].endswith(store.name))
