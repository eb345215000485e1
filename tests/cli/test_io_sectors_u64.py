"""Sectors are u64 in blktrace records (struct blk_io_trace.sector): from 2^63 on they must
stay exact from ingest to `advisor io` (they used to ingest, then `io` exited 101 with
"Type UINT64 ... can't be cast ... INT64")."""

from __future__ import annotations

import json
import struct
import subprocess

import duckdb

from tests.helpers import advisor
from tests.parity.blkparse import tool

MAGIC = 0x65617407  # BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION 7
WRITE, QUEUE, ISSUE, COMPLETE = 1 << 1, 1 << 4, 1 << 5, 1 << 6  # BLK_TC_* category bits
SECTORS = [2**63 + 8, 2**64 - 16, 4096]


def _record(seq: int, t: int, sector: int, category: int, code: int) -> bytes:
    """A 48-byte little-endian struct blk_io_trace of 4 KiB on device 8,0, no payload."""
    return struct.pack("<IIQQIIIIIHH", MAGIC, seq, t, sector, 4096, (category << 16) | code, 100, 8 << 20, 0, 0, 0)


def _capture(path, sectors=SECTORS) -> None:
    """Q, G, D, C (__BLK_TA_QUEUE 1, GETRQ 4, ISSUE 7, COMPLETE 8) of one write per sector."""
    out, seq = b"", 1
    for i, sector in enumerate(sectors):
        t = 1_000_000 + i * 100_000
        for dt, cat, code in ((0, QUEUE, 1), (1_000, QUEUE, 4), (2_000, ISSUE, 7), (52_000, COMPLETE, 8)):
            out += _record(seq, t + dt, sector, WRITE | cat, code)
            seq += 1
    path.write_bytes(out)


def test_sectors_beyond_signed_64_bits(tmp_path):
    capture, store = tmp_path / "big.bin", tmp_path / "s.duckdb"
    _capture(capture)
    with capture.open("rb") as f:
        printed = subprocess.run([tool("blkparse"), "-i", "-"], stdin=f, capture_output=True, text=True, check=True).stdout
    assert [int(line.split()[7]) for line in printed.splitlines() if " D " in line] == SECTORS
    assert advisor("ingest", str(capture), "-o", str(store)).code == 0
    with duckdb.connect(str(store), read_only=True) as con:
        assert [r[0] for r in con.execute("SELECT sector FROM blk_events WHERE action = 'D'").fetchall()] == SECTORS
        assert [r[0] for r in con.execute("SELECT c_sector FROM io_requests").fetchall()] == SECTORS
    r = advisor("io", str(store), "--json")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    d2c = next(p for p in s["phases"] if p["phase"] == "D2C")
    assert (d2c["n"], d2c["min_ns"], d2c["max_ns"]) == (3, 50_000, 50_000)
    # btt's seek distances, exact: from 0 to 2^63+8; from its end (2^63+16) to 2^64-16;
    # back from 2^64-16 to 4096.
    dists = sorted([2**63 + 8, 2**64 - 16 - (2**63 + 16), 2**64 - 16 - 4096])
    seeks = s["seeks"]["d2d"][0]
    assert seeks["nseeks"] == 3 and seeks["median"] == dists[1]
    assert seeks["mean"] == sum(dists) / 3
    assert next(m for m in s["merges"])["blk_total"] == 24


def test_request_ending_past_the_last_sector(tmp_path):
    """4 KiB at 2^64 - 4 ends 4 sectors past 2^64: followed like any other request (its
    G record finds its Q), not lost to a u64 end sector that wraps to 4."""
    capture, store = tmp_path / "top.bin", tmp_path / "s.duckdb"
    top = 2**64 - 4
    _capture(capture, [top])
    assert advisor("ingest", str(capture), "-o", str(store)).code == 0
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT sector, c_sector, q2g, d2c, q2c FROM io_requests").fetchall() == [(top, top, 1_000, 50_000, 52_000)]
    r = advisor("io", str(store), "--json")
    assert r.code == 0, r.err
    phases = {p["phase"]: (p["n"], p["max_ns"]) for p in json.loads(r.out)["phases"]}
    assert phases["Q2G"] == (1, 1_000) and phases["D2C"] == (1, 50_000)
