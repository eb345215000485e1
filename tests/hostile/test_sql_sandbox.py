"""`advisor sql` runs what the user types in DuckDB's sandbox: the store
read-only, no other file read or written, no network, no extensions, the
configuration locked. Each attack of the hostile-SQL list ends in one line
and exit 2, with nothing read, written or changed."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error

SAMPLE = str(SAMPLES / "tracefs-ext4.dat")


@pytest.fixture
def secret(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text("hunter2-the-secret\n")
    return f


@pytest.mark.parametrize(
    "query, says",
    [
        ("select * from read_text('{secret}')", "disabled by configuration"),
        ("select * from read_csv('{secret}')", "disabled by configuration"),
        ("select * from glob('{dir}/*')", "disabled by configuration"),
        ("select * from read_blob('/proc/self/environ')", "disabled by configuration"),
        # A file name as a table: the replacement scan that reads it is off.
        ("select * from '{secret}'", "does not exist"),
    ],
)
def test_no_file_is_read(query, says, secret):
    r = advisor("sql", SAMPLE, query.format(secret=secret, dir=secret.parent))
    line = one_line_error(r)
    assert says in line
    assert "hunter2" not in r.out + r.err and "secret.txt" not in r.out


@pytest.mark.parametrize(
    "query, target",
    [
        ("copy (select * from trace_info) to '{path}'", "out.csv"),
        ("copy trace_info to '{path}' (format parquet)", "out.parquet"),
        ("export database '{path}'", "exported"),
    ],
)
def test_no_file_is_written_without_allow_write(query, target, tmp_path):
    path = tmp_path / target
    line = one_line_error(advisor("sql", SAMPLE, query.format(path=path)))
    # A cached store's export is refused before the sandbox is asked (the next test).
    assert ("disabled by configuration" if target != "exported" else "EXPORT DATABASE would write") in line
    assert not path.exists()


def test_an_existing_unrelated_file_is_not_overwritten(tmp_path):
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me\n")
    one_line_error(advisor("sql", SAMPLE, f"copy (select 1) to '{victim}' (format csv)"))
    assert victim.read_text() == "keep me\n"


def test_allow_write_opens_exactly_the_named_file(tmp_path):
    named, other = tmp_path / "named.csv", tmp_path / "other.csv"
    r = advisor("sql", SAMPLE, f"copy (select key, value from trace_info order by key) to '{named}'", "--allow-write", str(named))
    assert r.code == 0, r.err
    assert "kernel_release" in named.read_text()
    line = one_line_error(advisor("sql", SAMPLE, f"copy (select 1) to '{other}'", "--allow-write", str(named)))
    assert "other.csv" in line and not other.exists()


def test_allow_write_directory_for_export(tmp_path):
    """A store in one file exports whole (IMPORT DATABASE elsewhere gives every row); a
    cached store, whose event tables are views over its Parquet files, is refused before
    anything is written: its export would name the cache's files, not hold their rows."""
    out = tmp_path / "export"
    line = one_line_error(advisor("sql", SAMPLE, f"export database '{out}'", "--allow-write", f"{out}/"))
    assert "EXPORT DATABASE" in line and "--single-file" in line and not out.exists()

    single = tmp_path / "one.duckdb"
    assert advisor("ingest", SAMPLE, "--single-file", "-o", str(single)).code == 0
    assert "disabled by configuration" in one_line_error(advisor("sql", str(single), f"export database '{out}'"))
    assert not out.exists()
    r = advisor("sql", str(single), f"export database '{out}'", "--allow-write", f"{out}/")
    assert r.code == 0, r.err
    assert (out / "trace_info.csv").is_file() and "read_parquet" not in (out / "schema.sql").read_text()
    want = duckdb.connect(str(single), read_only=True).execute("SELECT count(*) FROM events").fetchone()[0]
    again = duckdb.connect()
    again.execute(f"IMPORT DATABASE '{out}'")
    assert want > 100 and again.execute("SELECT count(*) FROM events").fetchone()[0] == want


@pytest.mark.parametrize(
    "query, says",
    [
        ("install httpfs", "disabled by configuration"),
        ("load httpfs", "disabled"),
        ("select * from 'https://example.com/x.csv'", "disabled by configuration"),
        ("set enable_external_access = true", "locked"),
        ("reset lock_configuration", "locked"),
        ("set allowed_directories = ['/']", "locked"),
        ("set temp_directory = '/tmp'", "locked"),
        ("create table stolen as select 1", "read-only"),
        ("update trace_info set value = 'x' where key = 'kernel_release'", "read-only"),
    ],
)
def test_network_extensions_configuration_and_the_store_are_closed(query, says):
    assert says in one_line_error(advisor("sql", SAMPLE, query))


def test_cache_poisoning_by_attach_fails(store_of):
    """ATTACH another cached store writable, then rewrite its kernel release:
    later verdicts would use the poisoned kernel."""
    other = store_of("sync-xfs-v6.dat")
    with duckdb.connect(str(other), read_only=True) as con:
        before = con.execute("select value from trace_info where key = 'kernel_release'").fetchone()[0]
    attack = (
        f"ATTACH '{other}' AS other (READ_WRITE); "
        "UPDATE other.trace_info SET value = '9.99.0-pwned' WHERE key = 'kernel_release'"
    )
    line = one_line_error(advisor("sql", SAMPLE, attack))
    assert "disabled by configuration" in line
    with duckdb.connect(str(other), read_only=True) as con:
        assert con.execute("select value from trace_info where key = 'kernel_release'").fetchone()[0] == before


def test_views_work_in_the_sandbox():
    r = advisor("sql", SAMPLE, "select count(*) as n from sync_ops", "-f", "csv")
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == "n" and int(r.out.splitlines()[1]) >= 0


def test_every_statement_result_is_printed():
    r = advisor("sql", SAMPLE, "select 'first-result' as a; create temp view v as select 'second-result' as b; select * from v")
    assert r.code == 0, r.err
    assert "first-result" in r.out and "second-result" in r.out


def test_statements_before_the_result_run_for_a_document():
    r = advisor("sql", SAMPLE, "create temp view v as select 7 as seven; select * from v", "-f", "json")
    assert r.code == 0, r.err
    assert r.out.strip().replace(" ", "").replace("\n", "") == '[{"seven":7}]'


def test_two_results_into_one_document_are_refused_before_any_runs(tmp_path):
    side = tmp_path / "side.csv"
    query = f"copy (select 1) to '{side}'; select 1; select 2"
    line = one_line_error(advisor("sql", SAMPLE, query, "-f", "csv", "--allow-write", str(side)))
    assert "2 statements return rows" in line
    assert not side.exists()


def test_store_given_directly_is_sandboxed_too(store_of, tmp_path, secret):
    store = tmp_path / "copy.duckdb"
    shutil.copy(store_of("tracefs-ext4.dat"), store)
    line = one_line_error(advisor("sql", str(store), f"select * from read_text('{secret}')"))
    assert "disabled by configuration" in line


def test_a_query_that_rewrites_a_cached_table_file_is_caught_next_time(tmp_path):
    """The store's own Parquet directory is readable by its views, and DuckDB's allow-list
    makes it writable too: a `COPY ... TO` over one of its files changes the cached
    store. The cache's checksum covers those files, so the next command rebuilds it."""
    env = {"WRITEBACK_ADVISOR_CACHE": str(tmp_path)}
    r = advisor("sql", SAMPLE, "select count(*) as n from writeback_dirty_folio", "-f", "csv", env=env)
    assert r.code == 0, r.err
    want = r.out
    (store,) = tmp_path.glob("*.duckdb")
    (parts,) = tmp_path.glob(store.name + ".*.parts")
    (target,) = [p for p in parts.iterdir() if "writeback_dirty_folio" in p.name]
    r = advisor("sql", SAMPLE, f"copy (select * from raw.writeback_dirty_folio limit 1) to '{target}' (format parquet)", env=env)
    assert r.code == 0, r.err
    r = advisor("sql", SAMPLE, "select count(*) as n from writeback_dirty_folio", "-f", "csv", env=env)
    assert r.code == 0, r.err
    assert "cached store is damaged" in r.err and "building it again" in r.err
    assert r.out == want
