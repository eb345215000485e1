"""Damaged and wrong input: a one-line error naming the file and the offset,
exit 2; where whole pages before the damage are intact, those pages are
ingested first, the damage recorded in parse_stats and the store marked
partial."""

from __future__ import annotations

import json
import struct

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error

V6 = "sync-xfs-v6.dat"
V7 = "fio-ext4-v7-zstd.dat"
V7_NONE = "snapshot-btrfs-v7-none.dat"


def test_empty_file(tmp_path):
    f = tmp_path / "empty.dat"
    f.write_bytes(b"")
    line = one_line_error(advisor("ingest", str(f)))
    assert str(f) in line and "empty" in line


@pytest.mark.parametrize("content", [b"\x7fELF\x02\x01\x01" + bytes(200), b"hello world\nthis is not a trace\n", bytes(range(256)) * 40])
def test_not_a_trace(tmp_path, content):
    f = tmp_path / "x.bin"
    f.write_bytes(content)
    line = one_line_error(advisor("ingest", str(f)))
    assert str(f) in line and "not a recognised trace file" in line


def test_missing_file(tmp_path):
    line = one_line_error(advisor("ingest", str(tmp_path / "nope.dat")))
    assert "no such file" in line


@pytest.mark.parametrize("name", [V6, V7, V7_NONE])
@pytest.mark.parametrize("cut", [3, 12, 40, 300, 5000, 60000])
def test_truncated_in_the_metadata(tmp_path, name, cut):
    data = (SAMPLES / name).read_bytes()
    f = tmp_path / "cut.dat"
    f.write_bytes(data[:cut])
    line = one_line_error(advisor("ingest", str(f)))
    assert str(f) in line
    assert "offset 0x" in line or "not a recognised trace file" in line


@pytest.mark.parametrize("name", [V7, V7_NONE])
@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_v7_truncated_in_the_data(tmp_path, name, fraction):
    """trace-cmd writes the v7 CPU-data index last: a cut file has none."""
    data = (SAMPLES / name).read_bytes()
    f = tmp_path / "cut.dat"
    f.write_bytes(data[: int(len(data) * fraction)])
    line = one_line_error(advisor("ingest", str(f)))
    assert "truncated file" in line and "offset 0x" in line


def _events(store):
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT ts, cpu, pid, event FROM events ORDER BY id").fetchall()


def _stats(store):
    with duckdb.connect(str(store), read_only=True) as con:
        stats = {(n, c): k for n, c, k in con.execute("SELECT name, cpu, count FROM parse_stats").fetchall()}
        info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    return stats, info


@pytest.mark.parametrize("fraction", [0.4, 0.75, 0.97])
def test_v6_truncated_in_the_data_keeps_whole_pages(tmp_path, store_of, fraction):
    data = (SAMPLES / V6).read_bytes()
    f = tmp_path / "cut.dat"
    f.write_bytes(data[: int(len(data) * fraction)])
    r = advisor("ingest", str(f), "-o", str(tmp_path / "cut.duckdb"), "--json")
    line = one_line_error(r)
    assert str(f) in line and "offset 0x" in line and "that could be read are in" in line
    assert json.loads(r.out)["damaged"] is True
    stats, info = _stats(tmp_path / "cut.duckdb")
    assert info["partial"] == "true"
    assert sum(v for (n, _), v in stats.items() if n == "truncated_bytes") > 0
    full = _events(store_of(V6))
    part = _events(tmp_path / "cut.duckdb")
    assert 0 < len(part) < len(full)
    # Everything kept is exactly what the full file has, in the same order.
    assert _is_subsequence(part, full)


def _is_subsequence(part: list, full: list) -> bool:
    it = iter(full)
    return all(any(x == y for y in it) for x in part)


def _v6_cpu_table(data: bytes) -> list[tuple[int, int]]:
    at = data.index(b"flyrecord\x00") + 10
    # v6: the CPU count precedes the options; here we read until offsets stop being plausible.
    out = []
    while True:
        off, size = struct.unpack_from("<QQ", data, at)
        if not (0 < off < len(data)) or off % 4096:
            return out
        out.append((off, size))
        at += 16


def _corrupt(tmp_path, patch) -> tuple:
    data = bytearray((SAMPLES / V6).read_bytes())
    cpus = _v6_cpu_table(bytes(data))
    off, size = next((o, s) for o, s in cpus if s >= 4 * 4096)
    page = off + 2 * 4096
    patch(data, page)
    f = tmp_path / "corrupt.dat"
    f.write_bytes(bytes(data))
    r = advisor("ingest", str(f), "-o", str(tmp_path / "c.duckdb"), "--json")
    return r, tmp_path / "c.duckdb", page


def test_corrupt_page_header_skips_that_page_only(tmp_path, store_of):
    def patch(data, page):
        struct.pack_into("<Q", data, page + 8, 0x7FFFFFF)  # commit larger than the page

    r, store, page = _corrupt(tmp_path, patch)
    line = one_line_error(r)
    assert f"{page:#x}" in line and "corrupt.dat" in line  # names the damaged page's offset
    stats, info = _stats(store)
    assert info["partial"] == "true"
    assert sum(v for (n, _), v in stats.items() if n == "corrupt_pages") == 1
    full, part = _events(store_of(V6)), _events(store)
    assert 0 < len(full) - len(part) < 200  # one page of events lost, no more
    assert _is_subsequence(part, full)


def test_corrupt_event_inside_a_page(tmp_path, store_of):
    def patch(data, page):
        # Rewrite the third event header of the page as a type-0 event whose
        # length word runs past the page.
        pos = page + 16
        for _ in range(2):
            head = struct.unpack_from("<I", data, pos)[0]
            tl = head & 0x1F
            if tl == 0:
                pos += 4 + struct.unpack_from("<I", data, pos + 4)[0] + 0
                pos = (pos + 3) & ~3
            elif tl <= 28:
                pos += 4 + tl * 4
            else:
                pos += 8
        struct.pack_into("<II", data, pos, 0, 0x100000)

    r, store, page = _corrupt(tmp_path, patch)
    assert "corrupt.dat" in one_line_error(r)
    stats, info = _stats(store)
    assert info["partial"] == "true"
    assert sum(v for (n, _), v in stats.items() if n == "corrupt_pages") == 1
    full, part = _events(store_of(V6)), _events(store)
    assert 0 < len(full) - len(part) < 200
    assert _is_subsequence(part, full)


def test_damaged_capture_stays_exit_2_from_the_cache(tmp_path):
    """A second ingest of the same damaged file comes from the cache and
    still ends with the same one-line error."""
    data = (SAMPLES / V6).read_bytes()
    f = tmp_path / "cut.dat"
    f.write_bytes(data[: len(data) // 2])
    first = one_line_error(advisor("ingest", str(f), "--json"))
    second = advisor("ingest", str(f), "--json")
    assert json.loads(second.out)["cached"] is True
    assert one_line_error(second) == first
    # Queries still run, with a warning naming the damage.
    q = advisor("sql", str(f), "select count(*) as n from events", "--format", "csv")
    assert q.code == 0 and int(q.out.splitlines()[1]) > 0
    assert "warning:" in q.err and "offset 0x" in q.err
