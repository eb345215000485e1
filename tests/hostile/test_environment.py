"""Faults of the machine rather than of the input: a read-only or full cache,
a full disk under -o or stdout, a damaged cached store, signals at any moment,
-o naming a device, a directory, a link or someone else's file, temporary
stores of other ingests sharing the cache. Each ends in one line and exit 2
(130 for SIGINT, 143 for SIGTERM), never a traceback, and leaves nothing
half-written that looks complete."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, command, one_line_error, script_command

SAMPLE = SAMPLES / "tracefs-ext4.dat"
BIG = SAMPLES / "sync-xfs-v6.dat"  # a few seconds of ingest


@contextlib.contextmanager
def tmpfs(where: Path, *options: str):
    """A small tmpfs (a disk that fills, or a read-only one)."""
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def cache_env(d: Path) -> dict:
    return {"WRITEBACK_ADVISOR_CACHE": str(d)}


def events_in(store: Path) -> int:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("select count(*) from events").fetchone()[0]


# -- read-only and full disks ---------------------------------------------


def test_read_only_cache_directory(tmp_path):
    with tmpfs(tmp_path / "ro", "ro", "size=1m") as ro:
        line = one_line_error(advisor("ingest", str(SAMPLE), env=cache_env(ro / "cache")))
        assert "Read-only file system" in line and "WRITEBACK_ADVISOR_CACHE" in line
        line = one_line_error(advisor("sql", str(SAMPLE), "select 1", env=cache_env(ro)))
        assert "Read-only file system" in line


def test_full_cache(tmp_path):
    with tmpfs(tmp_path / "full", "size=1m") as full:
        line = one_line_error(advisor("analyze", str(SAMPLE), env=cache_env(full)))
        assert "No space left on device" in line and str(full) in line
        assert os.listdir(full) == [], "a failed ingest left files in the cache"


MANY_TABLES = SAMPLES / "all-events-ext4-v7-zstd.dat"  # 298 event types with events: as many Parquet files


@pytest.fixture(scope="module")
def many_tables_bytes(tmp_path_factory) -> int:
    whole = tmp_path_factory.mktemp("whole")
    advisor("ingest", str(MANY_TABLES), env=cache_env(whole))
    return sum(f.stat().st_size for f in whole.rglob("*") if f.is_file())


@pytest.mark.parametrize("fill", [0.2, 0.3, 0.4, 0.5, 0.7])
def test_a_cache_that_fills_at_any_point(tmp_path, fill, many_tables_bytes):
    """The disk fills while the tables' Parquet files are written, while their footers are
    (at close: "Parquet error: fail to get inner writer: No space left on device (os
    error 28)", once a traceback), or while the catalog commits: one line naming the
    cause, wherever it happens, and nothing left in the cache."""
    with tmpfs(tmp_path / "full", f"size={int(many_tables_bytes * fill) // 4096 * 4096}") as full:
        r = advisor("analyze", str(MANY_TABLES), env=cache_env(full))
        line = one_line_error(r)
        assert r.code == 2 and str(full) in line and ("No space left on device" in line or "Could not write" in line), line
        assert os.listdir(full) == [], "a failed ingest left files in the cache"


def test_full_disk_under_ingest_output(tmp_path):
    with tmpfs(tmp_path / "full", "size=1m") as full:
        out = full / "incident.duckdb"
        line = one_line_error(advisor("ingest", str(SAMPLE), "-o", str(out)))
        assert str(out) in line and "No space left on device" in line
        assert os.listdir(full) == []


def test_full_disk_under_sql_output_keeps_the_previous_file(tmp_path, store_of):
    store = str(store_of("tracefs-ext4.dat"))
    with tmpfs(tmp_path / "full", "size=64k") as full:
        out = full / "events.csv"
        out.write_text("previous\n")
        line = one_line_error(advisor("sql", store, "select * from events", "-f", "csv", "-o", str(out)))
        assert str(out) in line and "No space left on device" in line
        assert out.read_text() == "previous\n"
        assert os.listdir(full) == ["events.csv"]


def test_full_disk_under_report_leaves_no_cut_report(tmp_path, store_of):
    with tmpfs(tmp_path / "full", "size=64k") as full:
        out = full / "report.html"
        line = one_line_error(advisor("report", str(SAMPLE), "-o", str(out), "--no-replay"))
        assert str(out) in line and "No space left on device" in line
        assert os.listdir(full) == []


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_full_stdout(fmt, store_of):
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [*command(), "sql", str(store_of("tracefs-ext4.dat")), "select * from events", "-f", fmt],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == ["advisor: error: standard output: No space left on device"]


def test_closed_pipe_is_quiet(store_of):
    p = subprocess.Popen(
        [*command(), "sql", str(store_of("tracefs-ext4.dat")), "select * from events", "-f", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.readline()
    p.stdout.close()
    assert p.wait(timeout=60) == 0  # like `git log | head -1`
    assert p.stderr.read() == b""


# -- damaged cached stores ---------------------------------------------------


def _cached_store(cache: Path) -> Path:
    r = advisor("ingest", str(SAMPLE), "--json", env=cache_env(cache))
    assert r.code == 0, r.err
    (store,) = cache.glob("*.duckdb")
    assert (cache / (store.name + ".blake3")).is_file()
    return store


def _truncate(store: Path) -> None:
    os.truncate(store, store.stat().st_size // 2)


def _flip(store: Path) -> None:
    # A block no query of the command reads: only the checksum sees it.
    with open(store, "r+b") as f:
        f.seek(store.stat().st_size // 3)
        f.write(b"\xff" * 64)


def _no_checksum(store: Path) -> None:
    store.with_name(store.name + ".blake3").unlink()


def _largest_part(store: Path) -> Path:
    (parts,) = store.parent.glob(store.name + ".*.parts")
    return max(parts.iterdir(), key=lambda p: p.stat().st_size)


def _part_overwritten(store: Path) -> None:
    # A Parquet file's data pages, not its footer: DuckDB would read it without complaint.
    part = _largest_part(store)
    with open(part, "r+b") as f:
        f.seek(part.stat().st_size // 3)
        f.write(b"\x00" * 64)


def _part_removed(store: Path) -> None:
    _largest_part(store).unlink()


def _parts_removed(store: Path) -> None:
    shutil.rmtree(_largest_part(store).parent)


def _checksum_names_other_tables(store: Path) -> None:
    # The checksum file names the parts directory it hashed: another name is damage too.
    checksum = store.with_name(store.name + ".blake3")
    digest, token = checksum.read_text().split()
    checksum.write_text(f"{digest} 1-{token.split('-')[1][::-1]}\n")


def _checksum_without_token(store: Path) -> str:
    """As written before the checksum file named the parts directory: the digest alone."""
    checksum = store.with_name(store.name + ".blake3")
    digest, token = checksum.read_text().split()
    checksum.write_text(digest + "\n")
    return token


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip, _no_checksum, _part_overwritten, _part_removed, _parts_removed, _checksum_names_other_tables],
    ids=["truncated", "bytes-overwritten", "no-checksum", "table-file-overwritten", "table-file-removed", "tables-removed",
         "checksum-names-other-tables"],
)
@pytest.mark.parametrize("cmd", [["ingest", str(SAMPLE), "--json"], ["sql", str(SAMPLE), "select count(*) from events", "-f", "csv"]])
def test_damaged_cached_store_is_rebuilt_with_a_warning(tmp_path, damage, cmd):
    store = _cached_store(tmp_path)
    events = events_in(store)
    damage(store)
    r = advisor(*cmd, env=cache_env(tmp_path))
    assert r.code == 0, r.err
    assert "Traceback" not in r.err
    assert f"warning: {store}: cached store" in r.err and "building it again" in r.err
    assert events_in(store) == events
    # Rebuilt: the next run reads it without a warning.
    r = advisor(*cmd, env=cache_env(tmp_path))
    assert r.code == 0 and "damaged" not in r.err


def test_a_checksum_without_the_parts_token_is_checked_against_the_catalogs(tmp_path):
    store = _cached_store(tmp_path)
    token = _checksum_without_token(store)
    assert token in next(tmp_path.glob("*.parts")).name
    cmd = ["sql", str(SAMPLE), "select count(*) from events", "-f", "csv"]
    r = advisor(*cmd, env=cache_env(tmp_path))
    assert r.code == 0 and "damaged" not in r.err, r.err
    _part_overwritten(store)
    r = advisor(*cmd, env=cache_env(tmp_path))
    assert r.code == 0 and "cached store is damaged" in r.err, r.err


# -- -o and --force ----------------------------------------------------------


@pytest.mark.parametrize("target", ["/dev/null", "directory", "link"])
def test_force_never_replaces_what_is_not_a_regular_file(tmp_path, target):
    if target == "directory":
        out = tmp_path / "dir"
        out.mkdir()
    elif target == "link":
        out = tmp_path / "link.duckdb"
        out.symlink_to(tmp_path / "elsewhere.duckdb")
    else:
        out = Path(target)
    before = os.lstat(out)
    line = one_line_error(advisor("ingest", str(SAMPLE), "-o", str(out), "--force"))
    assert str(out) in line and "a store is written only to a new or regular file" in line
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert not (tmp_path / "elsewhere.duckdb").exists()


def test_force_replaces_only_a_store_the_advisor_wrote(tmp_path):
    notes = tmp_path / "notes.duckdb"
    notes.write_text("my notes\n")
    line = one_line_error(advisor("ingest", str(SAMPLE), "-o", str(notes), "--force"))
    assert "not a store written by advisor" in line
    assert notes.read_text() == "my notes\n"
    other_db = tmp_path / "other.duckdb"
    with duckdb.connect(str(other_db)) as con:
        con.execute("create table t as select 1 as x")
    one_line_error(advisor("ingest", str(SAMPLE), "-o", str(other_db), "--force"))
    with duckdb.connect(str(other_db), read_only=True) as con:
        assert con.execute("select x from t").fetchall() == [(1,)]
    ours = tmp_path / "ours.duckdb"
    assert advisor("ingest", str(SAMPLE), "-o", str(ours)).code == 0
    assert advisor("ingest", str(SAMPLE), "-o", str(ours), "--force").code == 0
    assert events_in(ours) > 0


def test_sql_output_through_a_link_keeps_the_link(tmp_path, store_of):
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    link.symlink_to(target)
    r = advisor("sql", str(store_of("tracefs-ext4.dat")), "select 1 as a", "-f", "csv", "-o", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and target.read_text() == "a\n1\n"


def test_sql_output_on_a_directory(tmp_path, store_of):
    line = one_line_error(advisor("sql", str(store_of("tracefs-ext4.dat")), "select 1", "-o", str(tmp_path)))
    assert f"{tmp_path}: is a directory" in line


# -- signals -------------------------------------------------------------------


def catches_sigterm(pid: int) -> bool:
    """The advisor's first line has run: SIGTERM is caught (Python itself
    catches only SIGINT), per /proc/PID/status's SigCgt mask."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = int(next(l for l in f if l.startswith("SigCgt:")).split()[1], 16)
    except (FileNotFoundError, StopIteration):
        return False
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4])
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_at_startup(tmp_path, sig, code, delay):
    """Any moment from the advisor's first line (advisor/cli/entry.py) on:
    DELAY after it, while Typer, Rich and DuckDB load, or the ingest starts.
    (Before that line the interpreter is starting: about 15 ms that are
    Python's own.)"""
    p = subprocess.Popen(
        [*script_command(), "ingest", str(SAMPLE), "-o", str(tmp_path / "s.duckdb")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not catches_sigterm(p.pid):
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.0005)
    time.sleep(delay)
    p.send_signal(sig)
    assert p.wait(timeout=60) == code
    err = p.stderr.read()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert [l for l in err.splitlines() if l.strip()] == ["interrupted"]
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_ingest(tmp_path, sig, code):
    out = tmp_path / "s.duckdb"
    p = subprocess.Popen([*script_command(), "ingest", str(BIG), "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(t.stat().st_size > 0 for t in tmp_path.glob(".s.duckdb.*.tmp")):
        assert time.monotonic() < deadline and p.poll() is None, "finished before the signal"
        time.sleep(0.002)
    p.send_signal(sig)
    assert p.wait(timeout=60) == code
    err = p.stderr.read()
    assert "Traceback" not in err, err
    assert [l for l in err.splitlines() if l.strip()] == ["interrupted"]
    assert list(tmp_path.iterdir()) == [], "an interrupted ingest left files"


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_query(sig, code, store_of):
    """Inside DuckDB the interrupt becomes "Query interrupted"; the exit code
    still says which signal."""
    p = subprocess.Popen(
        [*script_command(), "sql", str(store_of("sync-xfs-v6.dat")), "select count(*) from events a, events b, events c"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        time.sleep(2.0)
        assert p.poll() is None, "finished before the signal"
        p.send_signal(sig)
        assert p.wait(timeout=60) == code
    finally:
        if p.poll() is None:  # a query the signal did not stop must not outlive the test
            p.kill()
            p.wait()
    err = p.stderr.read()
    assert "Traceback" not in err, err
    assert [l for l in err.splitlines() if l.strip()] == ["interrupted"]


def _read_until(fd: int, marker: bytes, seconds: float) -> bytes:
    seen, deadline = b"", time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the shell is gone
                break
    return seen


def _exit_code_within(pid: int, seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.1)
    return None  # still running: the caller's clean-up kills it


def test_ctrl_c_in_the_shell_ends_the_query_not_the_shell(store_of):
    """In the interactive shell Ctrl-C stops the running query (within a
    second, not when DuckDB's task ends) and the prompt comes back."""
    argv = [*script_command(), "sql", str(store_of("sync-xfs-v6.dat"))]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the shell on a terminal
        os.execvp(argv[0], argv)
    try:
        assert b"advisor> " in _read_until(fd, b"advisor> ", 30)
        os.write(fd, b"select count(*) from events a, events b, events c;\n")
        time.sleep(2.0)
        os.kill(pid, signal.SIGINT)
        sent = time.monotonic()
        after = _read_until(fd, b"advisor> ", 10)
        assert b"interrupted" in after and b"advisor> " in after, after
        assert time.monotonic() - sent < 5
        os.write(fd, b"select 41 + 1 as answer;\n")
        answer = _read_until(fd, b"advisor> ", 10)
        assert b"42" in answer and b"advisor> " in answer, answer
        # Ctrl-D only once the prompt is up: typed while readline has the
        # terminal back in canonical mode, the tty may turn it into a NUL
        # byte and the shell would wait for input forever.
        os.write(fd, b"\x04")
        assert _exit_code_within(pid, 30) == 0
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


# -- temporary stores shared between ingests -----------------------------------


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(120)
"""


def test_a_live_temporary_store_of_another_namespace_is_kept(tmp_path):
    """An ingest in another PID namespace (a container) or on another host
    holds a temporary store whose process id means nothing here: its lock
    says it is alive. One with no lock held is dead and removed."""
    out = tmp_path / "incident.duckdb"
    live = tmp_path / f".{out.name}.4194304-0badf00d.tmp"  # a pid beyond pid_max here
    dead = tmp_path / f".{out.name}.{os.getpid()}-deadbeef.tmp"  # a live pid, but no lock held
    for t in (live, dead):
        t.write_bytes(b"half a store")
    Path(str(dead) + ".lock").touch()
    # Their tables, written beside them under the same token.
    live_parts = tmp_path / f"{out.name}.4194304-0badf00d.parts"
    dead_parts = tmp_path / f"{out.name}.{os.getpid()}-deadbeef.parts"
    for d in (live_parts, dead_parts):
        d.mkdir()
        (d / "raw.writeback_start.parquet").write_bytes(b"half a table")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(live) + ".lock"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        r = advisor("ingest", str(SAMPLE), "-o", str(out))
        assert r.code == 0, r.err
        assert live.exists() and Path(str(live) + ".lock").exists() and live_parts.exists()
        assert not dead.exists() and not Path(str(dead) + ".lock").exists() and not dead_parts.exists()
    finally:
        holder.kill()
        holder.wait()
    # Its writer gone, the next ingest removes it.
    r = advisor("ingest", str(SAMPLE), "-o", str(out), "--force")
    assert r.code == 0, r.err
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0] == out.name and left[1].startswith(out.name) and left[1].endswith(".parts"), left
    assert left[1] not in (live_parts.name, dead_parts.name)


def test_concurrent_ingests_share_a_cache(tmp_path):
    procs = [
        subprocess.Popen([*command(), "ingest", str(SAMPLE), "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, **cache_env(tmp_path)})
        for _ in range(3)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    (store,) = tmp_path.glob("*.duckdb")
    # One set of tables is left: the store in place reads it; the others' were removed.
    (parts,) = tmp_path.glob(store.name + ".*.parts")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([store.name, parts.name, store.name + ".blake3"])
    assert events_in(store) == 2754


def test_ingests_finishing_together_leave_one_parts_directory(tmp_path):
    """The order that once left a directory for good (CI, three concurrent
    ingests): A renames its catalog into place, then B renames over it while
    A is still alive. Publishing gives up A's lock with its rename, so B's
    clean-up removes A's directory instead of keeping it as a live writer's."""
    from advisor.store.replace import publish, temporary

    store = tmp_path / "incident.duckdb"
    with temporary(store) as a, temporary(store) as b:
        for t in (a, b):
            with duckdb.connect(str(t.catalog)) as con:
                con.execute("CREATE TABLE trace_info AS SELECT 'parts_token' AS key, ? AS value", [t.token])
            t.parts.mkdir()
        publish(a, store, has_parts=True)
        assert a.parts.is_dir() and b.parts.is_dir()  # B is still writing: its directory stays
        publish(b, store, has_parts=True)
        assert not a.parts.exists() and b.parts.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([store.name, b.parts.name])
