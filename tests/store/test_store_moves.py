"""A store is a DuckDB catalog and its Parquet parts directory: moved together it keeps
working; moved without its tables it fails with one line; `--single-file` is one file."""

from __future__ import annotations

import shutil
import subprocess

from tests.conftest import SAMPLES
from tests.helpers import command

TRACE = SAMPLES / "fio-ext4-v7-zstd.dat"
QUERY = "select count(*) as n from writeback_dirty_folio"


def sql(store, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([*command(), "sql", str(store), QUERY, "--format", "csv", *extra],
                          capture_output=True, text=True, timeout=120)


def ingest(store, *extra) -> None:
    r = subprocess.run([*command(), "ingest", str(TRACE), "-o", str(store), *extra], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_moved_with_its_directory(tmp_path):
    ingest(tmp_path / "a.duckdb")
    want = sql(tmp_path / "a.duckdb").stdout
    assert want.splitlines() == ["n", "34914"]
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (parts,) = tmp_path.glob("a.duckdb.*.parts")
    shutil.move(tmp_path / "a.duckdb", moved / "b.duckdb")
    shutil.move(parts, moved / parts.name.replace("a.duckdb", "b.duckdb"))
    r = sql(moved / "b.duckdb")
    assert r.returncode == 0, r.stderr
    assert r.stdout == want


def test_moved_without_its_tables(tmp_path):
    ingest(tmp_path / "a.duckdb")
    (parts,) = tmp_path.glob("a.duckdb.*.parts")
    shutil.move(tmp_path / "a.duckdb", tmp_path / "b.duckdb")
    shutil.rmtree(parts)
    r = sql(tmp_path / "b.duckdb")
    assert r.returncode == 2
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "not beside it" in lines[0] and "Traceback" not in r.stderr, r.stderr


def test_single_file_store_is_one_file(tmp_path):
    ingest(tmp_path / "a.duckdb", "--single-file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.duckdb"]
    shutil.move(tmp_path / "a.duckdb", tmp_path / "b.duckdb")
    r = sql(tmp_path / "b.duckdb")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["n", "34914"]


def test_force_replaces_the_tables_too(tmp_path):
    """A store written again over the same path reads its new directory; the old one is removed."""
    ingest(tmp_path / "a.duckdb")
    (first,) = tmp_path.glob("a.duckdb.*.parts")
    ingest(tmp_path / "a.duckdb", "--force")
    (second,) = tmp_path.glob("a.duckdb.*.parts")
    assert first != second
    assert sql(tmp_path / "a.duckdb").stdout.splitlines() == ["n", "34914"]


def test_a_store_named_like_its_raw_schema(tmp_path):
    # DuckDB names the catalog after the file up to its first dot: raw.duckdb is the
    # catalog "raw", the store's own schema of parsed tables.
    for name, extra in (("raw.duckdb", ()), ("RAW.db", ()), ("raw.one.duckdb", ("--single-file",))):
        ingest(tmp_path / name, *extra)
        r = sql(tmp_path / name)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == ["n", "34914"], name
    r = subprocess.run([*command(), "analyze", str(tmp_path / "raw.duckdb"), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    ingest(tmp_path / "a.duckdb")
    (parts,) = tmp_path.glob("a.duckdb.*.parts")
    shutil.move(tmp_path / "a.duckdb", moved / "raw.duckdb")
    shutil.move(parts, moved / parts.name.replace("a.duckdb", "raw.duckdb"))
    r = sql(moved / "raw.duckdb")  # the catalog's views are repointed at the moved directory
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["n", "34914"]
