"""`advisor io` answers the same from blktrace files (the parser's summary, no
store) as from a store of them (SQL): every sample, both modes, each device."""

from __future__ import annotations

import pytest

from advisor.io import io_summary
from advisor.io.fast import blktrace_summary, only_blktrace
from advisor.store import open_store
from advisor.store.ingest import ingest
from tests.conftest import SAMPLES, samples
from tests.helpers import advisor, one_line_error, same

#: Each capture's binary blktrace inputs, as a user gives them (device sets read together).
CAPTURES: dict[str, list[str]] = {}
for m in samples("blktrace"):
    CAPTURES.setdefault(m["file"].split(".")[0], []).append(m["file"])
for m in samples("blktrace-merged") + samples("blktrace-stream"):
    CAPTURES[m["file"]] = [m["file"]]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    d = tmp_path_factory.mktemp("io-stores")
    out = {}
    for name, files in CAPTURES.items():
        out[name] = d / f"{name}.duckdb"
        ingest([SAMPLES / f for f in files], out[name])
    return out


def test_every_blktrace_sample_is_compared():
    assert len(CAPTURES) >= 10
    assert all(only_blktrace([SAMPLES / f for f in files]) for files in CAPTURES.values())


@pytest.mark.parametrize("btt_compat", [False, True], ids=["capture", "btt-compat"])
@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_parser_summary_equals_the_store_summary(stores, name, btt_compat):
    paths = [SAMPLES / f for f in CAPTURES[name]]
    with open_store(stores[name]) as con:
        devices = [None] + [r[0] for r in con.execute("SELECT dev FROM blk_devices ORDER BY dev").fetchall()]
        for device in devices:
            want = io_summary(con, device, btt_compat)
            got = blktrace_summary(paths, device, btt_compat)
            # A store of blktrace alone has no trace.dat to align clocks with.
            same(got, want, f"{name} {device or 'all'}")


def _drop_record(src, dst, index: int) -> None:
    """A copy of a per-CPU blktrace file without its index-th record (48-byte header,
    then pdu_len bytes): blktrace's sequence numbers then jump there, as when the
    relay buffer overflowed."""
    data = src.read_bytes()
    at = n = 0
    while n < index:
        at += 48 + int.from_bytes(data[at + 46:at + 48], "little")
        n += 1
    end = at + 48 + int.from_bytes(data[at + 46:at + 48], "little")
    dst.write_bytes(data[:at] + data[end:])


def test_records_lost_to_a_sequence_gap_are_said_by_both_paths(tmp_path):
    base = tmp_path / "gap"
    _drop_record(SAMPLES / "blk-ext4-fsync.blktrace.0", tmp_path / "gap.blktrace.0", 500)
    (tmp_path / "gap.blktrace.1").write_bytes((SAMPLES / "blk-ext4-fsync.blktrace.1").read_bytes())
    r = advisor("io", str(base))
    assert r.code == 0, r.err
    assert "1 record lost (sequence gaps: 254,0 cpu 0: 1); the figures undercount them" in r.err
    store = tmp_path / "gap.duckdb"
    assert advisor("ingest", str(base), "-o", str(store)).code == 0
    r = advisor("io", str(store))
    assert r.code == 0 and "1 record lost (sequence gaps: 254,0 cpu 0: 1)" in r.err, r.err


def test_nothing_readable_is_one_error_line_as_at_ingest(tmp_path):
    (tmp_path / "junk.blktrace.0").write_bytes(b"not blktrace at all, not even a header of 48 bytes")
    (tmp_path / "empty.blktrace.0").write_bytes(b"")
    line = one_line_error(advisor("io", str(tmp_path / "junk")))
    assert line == f"advisor: error: {tmp_path}/junk.blktrace.0: offset 0x0: not blktrace data (bad magic 6e6f7420)"
    line = one_line_error(advisor("io", str(tmp_path / "empty")))
    assert line == "advisor: error: empty: no blktrace records in this input (empty files or stream)"
