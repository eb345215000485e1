"""Damaged blktrace input: a one-line error naming the file and the offset,
exit 2; the intact records before the damage are in the store, and the
damage is counted in parse_stats. (With --json the error is all there is on
stderr; without it, the ingest summary comes first.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error
from tests.parity.blkparse import RECORD

SET = "blk-ext4-fsync"
CPU_FILES = [SAMPLES / f"{SET}.blktrace.0", SAMPLES / f"{SET}.blktrace.1"]


def record_starts(data: bytes) -> list[int]:
    """Offsets of the records of a little-endian blktrace file."""
    out, at = [], 0
    while at + RECORD.size <= len(data):
        out.append(at)
        at += RECORD.size + RECORD.unpack_from(data, at)[10]
    return out


def _rows(store) -> list[tuple]:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT * EXCLUDE (id) FROM blk_events ORDER BY cpu, seq, ts, action").fetchall()


def _facts(store) -> tuple[dict, dict]:
    with duckdb.connect(str(store), read_only=True) as con:
        info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
        stats = {n: c for n, c in con.execute("SELECT name, sum(count) FROM parse_stats GROUP BY 1").fetchall()}
    return info, stats


@pytest.fixture(scope="module")
def full_rows(tmp_path_factory):
    store = tmp_path_factory.mktemp("full") / "full.duckdb"
    assert advisor("ingest", str(SAMPLES / SET), "-o", str(store), "--json").code == 0
    return _rows(store)


def _copy_set(tmp_path):
    for f in CPU_FILES:
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / SET


def _rows_of_cpu(rows: list[tuple], cpu: int) -> list[tuple]:
    return [r for r in rows if r[2] == cpu]


@pytest.mark.parametrize("where", ["mid-header", "mid-payload", "after-header"])
def test_per_cpu_file_cut_mid_record(tmp_path, full_rows, where):
    base = _copy_set(tmp_path)
    cpu0 = tmp_path / CPU_FILES[0].name
    data = cpu0.read_bytes()
    starts = record_starts(data)
    # A record with a payload (a process-name note or a split) near the middle.
    k = next(i for i in range(len(starts) // 2, len(starts) - 1) if starts[i + 1] - starts[i] > RECORD.size)
    cut = {"mid-header": starts[k] + 20, "mid-payload": starts[k + 1] - 3, "after-header": starts[k] + RECORD.size}[where]
    cpu0.write_bytes(data[:cut])
    store = tmp_path / "cut.duckdb"
    r = advisor("ingest", str(base), "-o", str(store), "--json")
    line = one_line_error(r)
    assert f"{cpu0.name}: offset {starts[k]:#x}: truncated record" in line
    assert "that could be read are in" in line
    info, stats = _facts(store)
    assert info["partial"] == "true" and stats["blk_truncated_bytes"] == cut - starts[k]
    part = _rows(store)
    # CPU 1 whole; CPU 0 exactly the records before the cut (by sequence).
    assert _rows_of_cpu(part, 1) == _rows_of_cpu(full_rows, 1)
    cpu0_part, cpu0_full = _rows_of_cpu(part, 0), _rows_of_cpu(full_rows, 0)
    assert 0 < len(cpu0_part) < len(cpu0_full)
    assert cpu0_part == cpu0_full[: len(cpu0_part)]
    assert json.loads(r.out)["damaged"] is True


def test_bad_magic_in_the_middle_keeps_what_came_before(tmp_path, full_rows):
    base = _copy_set(tmp_path)
    cpu1 = tmp_path / CPU_FILES[1].name
    data = bytearray(cpu1.read_bytes())
    at = record_starts(bytes(data))[1000]
    data[at : at + 4] = b"\xde\xad\xbe\xef"
    cpu1.write_bytes(bytes(data))
    store = tmp_path / "magic.duckdb"
    line = one_line_error(advisor("ingest", str(base), "-o", str(store), "--json"))
    assert f"{cpu1.name}: offset {at:#x}: bad magic 0xefbeadde" in line
    part = _rows(store)
    assert _rows_of_cpu(part, 0) == _rows_of_cpu(full_rows, 0)
    assert 900 < len(_rows_of_cpu(part, 1)) <= 1000


def test_merged_file_cut_mid_record(tmp_path):
    data = (SAMPLES / f"{SET}.bin").read_bytes()
    starts = record_starts(data)
    cut = starts[3000] + 30
    f = tmp_path / "merged.bin"
    f.write_bytes(data[:cut])
    store = tmp_path / "m.duckdb"
    line = one_line_error(advisor("ingest", str(f), "-o", str(store), "--json"))
    assert f"merged.bin: offset {starts[3000]:#x}: truncated record" in line
    full = tmp_path / "full.duckdb"
    assert advisor("ingest", str(SAMPLES / f"{SET}.bin"), "-o", str(full)).code == 0
    part = _rows(store)
    assert 0 < len(part) and set(part) <= set(_rows(full))


def test_stream_cut_mid_record_on_stdin(tmp_path):
    data = (SAMPLES / "blk-stdin-stream.stream").read_bytes()
    starts = record_starts(data)
    store = tmp_path / "s.duckdb"
    r = subprocess.run(
        [sys.executable, "-m", "advisor", "ingest", "-", "-o", str(store)],
        input=data[: starts[5000] + 7], capture_output=True, timeout=300,
    )
    assert r.returncode == 2
    err = [l for l in r.stderr.decode().splitlines() if l.strip()]
    assert f"stdin: offset {starts[5000]:#x}: truncated record: 7 of 48 header bytes" in err[-1]
    assert "Traceback" not in r.stderr.decode()
    assert len(_rows(store)) > 4000


def test_missing_per_cpu_file(tmp_path):
    _copy_set(tmp_path)
    (tmp_path / CPU_FILES[0].name).unlink()
    shutil.copy(CPU_FILES[1], tmp_path / f"{SET}.blktrace.2")
    line = one_line_error(advisor("ingest", str(tmp_path / SET)))
    assert f"{SET}.blktrace.0" in line and "per-CPU file missing" in line


def test_no_per_cpu_files_at_all(tmp_path):
    line = one_line_error(advisor("ingest", str(tmp_path / "nothing.blktrace.0")))
    assert "nothing.blktrace.0" in line


@pytest.mark.parametrize("make", ["empty set", "empty stdin"])
def test_empty(tmp_path, make):
    if make == "empty set":
        for cpu in (0, 1):
            (tmp_path / f"idle.blktrace.{cpu}").write_bytes(b"")
        line = one_line_error(advisor("ingest", str(tmp_path / "idle")))
        assert "idle: no blktrace records" in line
    else:
        r = subprocess.run([sys.executable, "-m", "advisor", "ingest", "-", "-o", str(tmp_path / "s.duckdb")], input=b"", capture_output=True)
        assert r.returncode == 2 and b"stdin: no blktrace records" in r.stderr


@pytest.mark.parametrize("name", ["garbage.blktrace.0", "garbage-after.bin"])
def test_garbage(tmp_path, name):
    f = tmp_path / name
    junk = bytes((i * 37 + 11) % 256 for i in range(4000))
    if name.endswith(".bin"):
        good = (SAMPLES / f"{SET}.bin").read_bytes()
        f.write_bytes(good + junk)
        line = one_line_error(advisor("ingest", str(f), "-o", str(tmp_path / "g.duckdb"), "--json"))
        assert f"{name}: offset {len(good):#x}: bad magic" in line
        assert "that could be read are in" in line
    else:
        f.write_bytes(junk)
        line = one_line_error(advisor("ingest", str(f)))
        assert f"{name}: offset 0x0: not blktrace data" in line


def test_garbage_on_stdin(tmp_path):
    junk = bytes((i * 37 + 11) % 256 for i in range(4000))
    r = subprocess.run([sys.executable, "-m", "advisor", "ingest", "-", "-o", str(tmp_path / "s.duckdb")], input=junk, capture_output=True)
    assert r.returncode == 2
    lines = [l for l in r.stderr.decode().splitlines() if l.strip()]
    assert len(lines) == 1 and "stdin: offset 0x0: not blktrace data" in lines[0]


def test_damaged_blkparse_text_names_the_line(tmp_path):
    lines = (SAMPLES / f"{SET}.blkparse.txt").read_text().splitlines(keepends=True)
    lines[100] = "254,0    1 this is not a blkparse line\n"
    f = tmp_path / "bad.blkparse.txt"
    f.write_text("".join(lines))
    store = tmp_path / "t.duckdb"
    line = one_line_error(advisor("ingest", str(f), "-o", str(store), "--json"))
    assert "bad.blkparse.txt: line 101: not a blkparse event line" in line
    info, stats = _facts(store)
    assert stats["blkparse_malformed_lines"] == 1
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM blk_events").fetchone()[0] == 9425 - 1
