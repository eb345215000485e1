"""Damage in one CPU's data stays that CPU's, and CPU tables that do not
add up are counted, each made from a real sample by changing one field:

- a compressed chunk of CPU 0 that claims 64 MiB (or 16 MiB) and does not
  inflate to it: CPU 0 loses that chunk, CPU 1 keeps every event (with one
  decompression budget for all CPUs, the claim used it up and CPU 1's
  intact chunks were dropped as bad_chunks);
- a BUFFER CPU id of 2^31, or a CPU listed twice: that entry's data is not
  read (never stored as cpu -2147483648, never merged into CPU 0) and is
  counted as data loss (`unread_cpu_bytes`), with a line naming the file and
  the offset;
- a v6 CPU count of 0 or 1 where the file holds two CPUs' pages, or a v7
  BUFFER option that lists one of the two CPUs whose data the file holds: the
  pages no CPU claims are counted, never "0 events, no data loss".
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor
from tests.hostile import layout as L
from tests.hostile.cases import V6, V7_ZLIB, V7_ZSTD, _v6_ncpus, patch


def events_per_cpu(store: Path) -> dict[int, int]:
    with duckdb.connect(str(store), read_only=True) as con:
        return dict(con.execute("SELECT cpu, count(*) FROM events GROUP BY cpu").fetchall())


def stat(store: Path, name: str) -> dict[int | None, tuple[str, int]]:
    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute("SELECT cpu, severity, count FROM parse_stats WHERE name = ?", [name]).fetchall()
    return {cpu: (severity, count) for cpu, severity, count in rows}


def ingest_json(tmp_path: Path, data: bytes, threads: int = 1) -> tuple[int, dict | None, str, Path]:
    f = tmp_path / "hostile.dat"
    f.write_bytes(data)
    store = tmp_path / f"hostile-{threads}.duckdb"
    r = advisor("ingest", str(f), "-o", str(store), "--json", env={"WRITEBACK_ADVISOR_THREADS": str(threads)})
    return r.code, (json.loads(r.out) if r.code == 0 else None), r.err, store


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """Events per CPU of the unchanged samples."""
    made: dict[str, dict[int, int]] = {}

    def get(name: str) -> dict[int, int]:
        if name not in made:
            store = tmp_path_factory.mktemp("clean") / "clean.duckdb"
            r = advisor("ingest", str(SAMPLES / name), "-o", str(store))
            assert r.code == 0, r.err
            made[name] = events_per_cpu(store)
        return made[name]

    return get


# -- one CPU's bad chunk -------------------------------------------------------


@pytest.mark.parametrize("claim_mib", [64, 16], ids=["claims-64MiB", "claims-16MiB"])
@pytest.mark.parametrize("sample", [V7_ZSTD, V7_ZLIB], ids=["zstd", "zlib"])
def test_a_bad_chunk_costs_only_its_own_cpu(sample, claim_mib, tmp_path, clean):
    """CPU 0's first chunk (the first any CPU inflates) claims more than it
    holds: 64 MiB is beyond CPU 0's share of the budget, 16 MiB within it
    but not what the frame inflates to."""
    d = (SAMPLES / sample).read_bytes()
    lay = L.parse(d)
    at, _, real = lay.cpus[0].chunks[0]
    code, _, err, store = ingest_json(tmp_path, patch(d, at + 4, "<I", claim_mib << 20))
    assert code == 2 and err.count("advisor: error:") == 1 and "hostile.dat" in err and f"offset {at:#x}" in err, err
    want, got = clean(sample), events_per_cpu(store)
    print(f"{sample}, CPU 0 chunk 0 claims {claim_mib} MiB: kept {sum(got.values()):,} of {sum(want.values()):,} events "
          f"(CPU 0 {got.get(0, 0):,} of {want[0]:,}, CPU 1 {got.get(1, 0):,} of {want[1]:,})")
    assert got[1] == want[1]
    assert 0 < got[0] < want[0]
    bad = stat(store, "bad_chunks")
    assert bad[0] == ("error", 1) and bad[1] == ("error", 0)


def _bad_frame(d: bytes, at: int) -> bytes:
    """The chunk's frame with 16 bytes from its 8th overwritten."""
    b = bytearray(d)
    b[at + 8 + 8:at + 8 + 24] = b"\xa5" * 16
    return bytes(b)


# Chunk k of CPU 0, changed: with two threads the chunk after the one being read is
# inflated on another thread before the merge reaches it; what it finds must not change.
DAMAGE = {
    "frame-corrupt": lambda d, at: _bad_frame(d, at),
    "claims-16MiB": lambda d, at: patch(d, at + 4, "<I", 16 << 20),
    "claims-64MiB": lambda d, at: patch(d, at + 4, "<I", 64 << 20),
    "table-cut": lambda d, at: patch(d, at, "<I", 1 << 30),
}


@pytest.mark.parametrize("chunk", [1, 3])
@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("sample", [V7_ZSTD, V7_ZLIB], ids=["zstd", "zlib"])
def test_chunks_inflated_ahead_find_the_same_damage(sample, damage, chunk, tmp_path):
    d = (SAMPLES / sample).read_bytes()
    at = L.parse(d).cpus[0].chunks[chunk][0]
    data = DAMAGE[damage](d, at)
    one_code, one_doc, one_err, one_store = ingest_json(tmp_path, data, threads=1)
    two_code, two_doc, two_err, two_store = ingest_json(tmp_path, data, threads=2)
    assert (one_code, one_err) == (two_code, two_err.replace(two_store.name, one_store.name))
    assert f"offset {at:#x}" in one_err or f"offset {at + 8:#x}" in one_err, one_err
    for doc in (one_doc, two_doc):
        if doc:
            doc.pop("store", None)
    assert one_doc == two_doc
    with duckdb.connect(str(one_store), read_only=True) as a, duckdb.connect(str(two_store), read_only=True) as b:
        for q in ("SELECT cpu, count(*), sum(id), min(ts), max(ts) FROM events GROUP BY cpu ORDER BY cpu",
                  "SELECT name, cpu, severity, count FROM parse_stats ORDER BY ALL"):
            assert a.execute(q).fetchall() == b.execute(q).fetchall(), q


# -- CPU ids and counts against the header ------------------------------------------


def test_cpu_id_2_to_the_31_is_not_stored_as_a_negative_cpu(tmp_path, clean):
    d = (SAMPLES / V7_ZSTD).read_bytes()
    lay = L.parse(d)
    cpu1 = lay.cpus[1]
    code, doc, err, store = ingest_json(tmp_path, patch(d, cpu1.entry, "<I", 1 << 31))
    assert code == 0, err
    assert events_per_cpu(store) == {0: clean(V7_ZSTD)[0]}
    # The compressed region: its 4-byte chunk count, then the size the table states.
    assert stat(store, "unread_cpu_bytes") == {None: ("data_loss", cpu1.size + 4)}
    assert any(l["name"] == "unread_cpu_bytes" and l["count"] == cpu1.size + 4 for l in doc["data_loss"]), doc["data_loss"]
    line = one(doc["damage"])
    assert "hostile.dat" in line and f"offset {cpu1.offset:#x}" in line and "CPU 2147483648" in line, line


def test_a_cpu_listed_twice_is_not_merged(tmp_path, clean):
    d = (SAMPLES / V7_ZSTD).read_bytes()
    lay = L.parse(d)
    cpu1 = lay.cpus[1]
    code, doc, err, store = ingest_json(tmp_path, patch(d, cpu1.entry, "<I", 0))
    assert code == 0, err
    assert events_per_cpu(store) == {0: clean(V7_ZSTD)[0]}
    assert stat(store, "unread_cpu_bytes") == {None: ("data_loss", cpu1.size + 4)}
    line = one(doc["damage"])
    assert "hostile.dat" in line and f"offset {cpu1.offset:#x}" in line and "CPU 0 a second time" in line, line


def test_v6_cpu_count_0_is_not_an_empty_capture(tmp_path):
    d = (SAMPLES / V6).read_bytes()
    code, _, err, store = ingest_json(tmp_path, patch(d, _v6_ncpus(d, L.parse(d)), "<I", 0))
    lines = [l for l in err.splitlines() if l.strip()]
    assert code == 2 and len(lines) == 1 and "hostile.dat" in lines[0], err
    assert "in no CPU's data (the table lists 0 CPUs)" in lines[0] and "offset 0x" in lines[0], lines[0]
    unread = int(lines[0].split(" bytes after the flyrecord table")[0].rsplit(" ", 1)[1])
    print(f"{V6} with 0 CPUs: {unread:,} of {len(d):,} bytes unread, exit 2")
    assert unread > sum(c.size for c in L.parse(d).cpus) and not store.exists()


def test_v6_cpu_count_1_of_2_counts_the_other_cpu(tmp_path, clean):
    d = (SAMPLES / V6).read_bytes()
    lay = L.parse(d)
    code, doc, err, store = ingest_json(tmp_path, patch(d, _v6_ncpus(d, lay), "<I", 1))
    assert code == 0, err
    assert events_per_cpu(store) == {0: clean(V6)[0]}
    assert stat(store, "unread_cpu_bytes") == {None: ("data_loss", lay.cpus[1].size)}
    line = one(doc["damage"])
    assert "hostile.dat" in line and f"offset {lay.cpus[1].offset:#x}" in line and "(the table lists 1 CPUs)" in line, line


@pytest.mark.parametrize("left_out", [1, 0], ids=["last-cpu", "first-cpu"])
def test_a_cpu_the_buffer_option_leaves_out_is_counted(left_out, tmp_path, clean):
    """v7 lists only CPUs that recorded something, so a CPU missing from the
    BUFFER option is no proof of loss; its data still sitting in the flyrecord
    section, read by nothing, is. The option is made to list one CPU: the
    count says 1, and when CPU 0 is the one left out, CPU 1's entry moves into
    the first slot."""
    d = (SAMPLES / V7_ZSTD).read_bytes()
    lay = L.parse(d)
    kept, gone = lay.cpus[1 - left_out], lay.cpus[left_out]
    first = lay.cpus[0].entry
    patched = bytearray(patch(d, first - 4, "<I", 1))
    patched[first : first + 20] = d[kept.entry : kept.entry + 20]
    code, doc, err, store = ingest_json(tmp_path, bytes(patched))
    assert code == 0, err
    assert events_per_cpu(store) == {kept.cpu: clean(V7_ZSTD)[kept.cpu]}
    # From the page boundary where the left-out CPU's data starts to the next CPU's
    # (its chunk count, its chunks and their padding), or to the section's end.
    upto = kept.offset if kept.offset > gone.offset else gone.offset + gone.size + 4
    assert stat(store, "unread_cpu_bytes") == {None: ("data_loss", upto - gone.offset)}
    line = one(doc["damage"])
    assert "hostile.dat" in line and f"offset {gone.offset:#x}" in line and "the BUFFER option lists 1 CPUs" in line, line


def test_clean_samples_have_no_unread_cpu_data(clean, tmp_path):
    for name in (V6, V7_ZSTD, V7_ZLIB, "snapshot-btrfs-v7-none.dat"):
        store = tmp_path / f"{name}.duckdb"
        r = advisor("ingest", str(SAMPLES / name), "-o", str(store))
        assert r.code == 0, r.err
        assert stat(store, "unread_cpu_bytes") == {}, name


def one(lines: list[str]) -> str:
    assert len(lines) == 1, lines
    return lines[0]


def test_the_chunk_table_is_where_the_layout_says():
    # The mutations above patch u32 fields found by tests/hostile/layout.py.
    d = (SAMPLES / V7_ZSTD).read_bytes()
    lay = L.parse(d)
    at, zs, us = lay.cpus[0].chunks[0]
    assert struct.unpack_from("<II", d, at) == (zs, us) and us == 10 * lay.page_size
