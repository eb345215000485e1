"""Hostile inputs, each made from a real sample by changing what one field
claims (a size, a count, an offset, a compressed block...). README.md in
this directory has the table; test_hostile.py runs every case through
`advisor ingest` and checks what the tool does.

A case builds its input files under `tmp` and returns the arguments to
ingest. `expect` is the exit code, `kept` whether the intact part is in the
store (trace_info.partial), `says` a fragment of the one-line error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tests.conftest import SAMPLES
from tests.hostile import layout as L

V6 = "sync-xfs-v6.dat"
V6_INSTANCE = "instance-ext4-v6.dat"
V7_NONE = "snapshot-btrfs-v7-none.dat"
V7_ZSTD = "lost-events-v7-zstd.dat"
V7_KALLSYMS = "symbols-xfs-v7-zstd.dat"
V7_ZLIB = "dbench-btrfs-v7-zlib.dat"
TEXT = "tracefs-ext4.trace.txt"
BLK = "blk-ext4-fsync"
BLKPARSE = "blk-ext4-fsync.blkparse.txt"


@dataclass
class Case:
    id: str
    build: Callable[[Path], list[str]]
    says: str
    expect: int = 2
    kept: bool = False
    # expect 0: nothing is damaged, but parse_stats records the data loss.


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def write(tmp: Path, name: str, data: bytes) -> list[str]:
    f = tmp / name
    f.write_bytes(data)
    return [str(f)]


def patch(data: bytes, at: int, fmt: str, value) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def v6_instance_cpu0(d: bytes, lay: L.Layout) -> int:
    """File offset of CPU 0's (offset, size) in a v6 instance's table: after `flyrecord\\0` where its BUFFER option points."""
    (table,) = struct.unpack_from("<Q", d, lay.option_fields[L.OPT_BUFFER])
    assert d[table : table + 10] == b"flyrecord\0"
    return table + 10


def dat(name: str, change: Callable[[bytes, L.Layout], bytes], out: str = "hostile.dat"):
    def build(tmp: Path) -> list[str]:
        d = sample(name)
        return write(tmp, out, change(d, L.parse(d)))

    return build


# --- trace.dat v6 --------------------------------------------------------


def v6_format_text(d: bytes, lay: L.Layout, new_text: bytes) -> bytes:
    """Replace the first event format with `new_text`; the CPU data after
    it moves, so the flyrecord table is shifted to match."""
    at, size = lay.formats[0]
    delta = len(new_text) - size
    out = bytearray(d[:at] + struct.pack("<Q", len(new_text)) + new_text + d[at + 8 + size :])
    for c in lay.cpus:
        struct.pack_into("<Q", out, c.entry + delta, c.offset + delta)
    return bytes(out)


def ten_mb_field_name(d: bytes, lay: L.Layout) -> bytes:
    at, size = lay.formats[0]
    text = d[at + 8 : at + 8 + size]
    name = b"x" * (10 << 20)
    return v6_format_text(d, lay, text.replace(b"common_type;", name + b";", 1))


def first_page(lay: L.Layout) -> int:
    return min(c.offset for c in lay.cpus if c.size)


def event_length_lie(d: bytes, lay: L.Layout) -> bytes:
    # The first entry of CPU 0's 3rd page becomes a "length in the next word" event claiming 1 GiB.
    page = lay.cpus[0].offset + 2 * lay.page_size
    return patch(patch(d, page + 16, "<I", 0), page + 20, "<I", 1 << 30)


def header_page_overlap(d: bytes, lay: L.Layout) -> bytes:
    # "field: u64 timestamp;\toffset:0;" -> "offset:9;": the timestamp would overlap the commit word.
    at = d.index(b"u64 timestamp;\toffset:0;", lay.header_page_at)
    return d[: at + 22] + b"9" + d[at + 23 :]


def v6_after_formats(d: bytes, lay: L.Layout) -> int:
    at, size = lay.formats[-1]
    return at + 8 + size  # the u32 kallsyms size


# --- trace.dat v7 --------------------------------------------------------


def buffer_cpus_field(lay: L.Layout) -> int:
    """File offset of the u32 CPU count in the top instance's BUFFER option."""
    return lay.cpus[0].entry - 4


def replace_chunk(d: bytes, lay: L.Layout, cpu: int, chunk: int, new: bytes) -> bytes:
    """Put `new` (u32 zsize, u32 usize, data) in place of one compressed
    chunk; what follows moves, and every offset pointing past it with it."""
    c = lay.cpus[cpu]
    at, zs, _ = c.chunks[chunk]
    old_end = at + 8 + zs
    delta = len(new) - (8 + zs)
    out = bytearray(d[:at] + new + d[old_end:])
    moved = lambda off: off + delta if off >= old_end else off  # noqa: E731
    struct.pack_into("<Q", out, moved(c.entry) + 12, c.size + delta)
    for other in lay.cpus:
        struct.pack_into("<Q", out, moved(other.entry) + 4, moved(other.offset))
    done = lay.option_fields[L.OPT_DONE]  # the first options section links the one holding BUFFER
    struct.pack_into("<Q", out, moved(done), moved(struct.unpack_from("<Q", d, done)[0]))
    return bytes(out)


def zstd_frame(size: int) -> bytes:
    """A frame of `size` zero bytes: a few KiB that inflate to `size`."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile() as f:
        f.truncate(size)
        return subprocess.run(["zstd", "-q", "-19", "-c", f.name], capture_output=True, check=True).stdout


def bomb_chunk(size: int) -> bytes:
    z = zstd_frame(size)
    return struct.pack("<II", len(z), size) + z


def bomb_on_every_cpu(d: bytes, lay: L.Layout) -> bytes:
    d = replace_chunk(d, lay, 1, 2, bomb_chunk(40 << 20))
    return replace_chunk(d, L.parse(d), 0, 2, bomb_chunk(40 << 20))


def zlib_chunk_garbage(d: bytes, lay: L.Layout) -> bytes:
    at, zs, _ = lay.cpus[0].chunks[3]
    return d[: at + 8] + bytes((i * 97 + 13) & 0xFF for i in range(zs)) + d[at + 8 + zs :]


def section_usize_lie(sid: int):
    def change(d: bytes, lay: L.Layout) -> bytes:
        at = lay.sections[sid] + 16 + 4  # section header, then u32 zsize, u32 usize
        return patch(d, at, "<I", struct.unpack_from("<I", d, at)[0] + 1)

    return change


def formats_bomb(d: bytes, lay: L.Layout) -> bytes:
    """The event-formats section becomes a zstd frame claiming 200 MiB,
    appended at the end of the file with the option pointing at it."""
    z = zstd_frame(200 << 20)
    body = struct.pack("<II", len(z), 200 << 20) + z
    sec = struct.pack("<HHIQ", L.SEC_FORMATS, L.COMPRESSED, 0, len(body)) + body
    return patch(d, lay.option_fields[L.SEC_FORMATS], "<Q", len(d)) + sec


def v7_formats(transform: Callable[[bytes], bytes]):
    """Rewrite the (uncompressed) event-formats section of the v7 sample:
    the new one is appended to the file and its option points at it."""

    def change(d: bytes, lay: L.Layout) -> bytes:
        at = lay.sections[L.SEC_FORMATS]
        size = struct.unpack_from("<Q", d, at + 8)[0]
        body = transform(d[at + 16 : at + 16 + size])
        sec = struct.pack("<HHIQ", L.SEC_FORMATS, 0, 0, len(body)) + body
        return patch(d, lay.option_fields[L.SEC_FORMATS], "<Q", len(d)) + sec

    return change


def first_format(body: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    """Edit the first format of the first system in an event-formats body."""
    p = body.index(b"\0", 4) + 1 + 4
    (size,) = struct.unpack_from("<Q", body, p)
    text = edit(body[p + 8 : p + 8 + size])
    return body[:p] + struct.pack("<Q", len(text)) + text + body[p + 8 + size :]


def many_fields(text: bytes) -> bytes:
    extra = b"".join(b"\tfield:int f%d;\toffset:8;\tsize:4;\tsigned:1;\n" % i for i in range(5000))
    return text.replace(b"\n\n", b"\n" + extra + b"\n", 1)


def half_mb_field_name(text: bytes) -> bytes:
    return text.replace(b"common_type;", b"y" * (512 << 10) + b";", 1)


def field_offsets_beyond(text: bytes) -> bytes:
    lines = text.split(b"\n")
    for i, line in enumerate(lines):
        if b"field:" in line and b"common_" not in line:
            lines[i] = line.split(b"offset:")[0] + b"offset:4294967295;\tsize:4294967295;\tsigned:0;"
    return b"\n".join(lines)


# --- text ------------------------------------------------------------------


def text_with(lines_at: float, insert: bytes):
    def build(tmp: Path) -> list[str]:
        d = sample(TEXT)
        cut = d.index(b"\n", int(len(d) * lines_at)) + 1
        return write(tmp, "hostile.trace.txt", d[:cut] + insert + d[cut:])

    return build


def text_event_types(tmp: Path) -> list[str]:
    d = sample(TEXT)
    line = next(l for l in d.split(b"\n") if b"writeback_dirty_folio:" in l)
    many = b"".join(line.replace(b"writeback_dirty_folio:", b"ev%d:" % i) + b"\n" for i in range(5000))
    return write(tmp, "hostile.trace.txt", d + many)


def text_event_line(field: bytes = b"", comm: bytes | None = None) -> Callable[[Path], list[str]]:
    """A real event line of the sample with `field` added to its fields and/or
    its task name replaced, inserted a third of the way in."""

    def build(tmp: Path) -> list[str]:
        d = sample(TEXT)
        line = next(l for l in d.split(b"\n") if b"global_dirty_state:" in l)
        if comm is not None:
            task = line.split()[0]  # COMM-PID, e.g. dd-23956
            line = line.replace(task, comm + b"-" + task.rsplit(b"-", 1)[1], 1)
        return text_with(0.3, line + field + b"\n")(tmp)

    return build


def text_retyping_value(tmp: Path) -> list[str]:
    """One `global_dirty_state` line whose dirty count is not a number."""
    return write(tmp, "hostile.trace.txt", sample(TEXT).replace(b" dirty=", b" dirty=NOT_A_NUMBER_", 1))


def text_bad_timestamps(tmp: Path) -> list[str]:
    d = sample(TEXT)
    lines = d.split(b"\n")
    for i in range(len(lines) // 2, len(lines) // 2 + 50):
        parts = lines[i].split(b": ", 1)
        if len(parts) == 2 and parts[0][-7:-6] == b".":
            lines[i] = parts[0][:-14] + b"99999999999999999999.123456: " + parts[1]
    return write(tmp, "hostile.trace.txt", b"\n".join(lines))


# --- blktrace ----------------------------------------------------------------


def blk_set(tmp: Path, change: Callable[[bytes], bytes], which: int = 1) -> list[str]:
    for cpu in (0, 1):
        d = sample(f"{BLK}.blktrace.{cpu}")
        (tmp / f"{BLK}.blktrace.{cpu}").write_bytes(change(d) if cpu == which else d)
    return [str(tmp / BLK)]


def blk_record(d: bytes, frac: float) -> int:
    recs = L.blk_records(d)
    return recs[int(len(recs) * frac)][0]


def pdu_len_lie(d: bytes) -> bytes:
    recs = L.blk_records(d)
    at = recs[-3][0]
    return patch(d, at + 46, "<H", 0xFFFF)


def blk_magic(d: bytes) -> bytes:
    return patch(d, blk_record(d, 0.5), "<I", 0xDEADBEEF)


def blk_version(d: bytes) -> bytes:
    at = blk_record(d, 0.5)
    return patch(d, at, "<I", (struct.unpack_from("<I", d, at)[0] & ~0xFF) | 0x01)


def blk_cut(d: bytes) -> bytes:
    return d[: blk_record(d, 0.7) + 30]


def blk_seq_jump(d: bytes) -> bytes:
    at = blk_record(d, 0.5)
    return patch(d, at + 4, "<I", struct.unpack_from("<I", d, at + 4)[0] + (1 << 30))


def merged_garbage(tmp: Path) -> list[str]:
    d = sample(f"{BLK}.bin")
    at = blk_record(d, 0.6)
    return write(tmp, "hostile.bin", d[:at] + bytes((i * 31) & 0xFF for i in range(4096)) + d[at:])


def stdin_pdu_lie(tmp: Path) -> list[str]:
    d = sample("blk-stdin-stream.stream")
    (tmp / "stream").write_bytes(pdu_len_lie(d))
    return ["-", "-o", str(tmp / "stdin.duckdb"), "<" + str(tmp / "stream")]


def blkparse_with(insert: bytes, at: float = 0.5):
    def build(tmp: Path) -> list[str]:
        d = sample(BLKPARSE)
        cut = d.index(b"\n", int(len(d) * at)) + 1
        return write(tmp, "hostile.blkparse.txt", d[:cut] + insert + d[cut:])

    return build


def blkparse_huge_sector(tmp: Path) -> list[str]:
    d = sample(BLKPARSE)
    lines = d.split(b"\n")
    i = next(i for i in range(len(lines) // 2, len(lines)) if b" + " in lines[i])
    head, tail = lines[i].split(b" + ", 1)
    lines[i] = head.rsplit(b" ", 1)[0] + b" 999999999999999999999999999 + " + tail
    return write(tmp, "hostile.blkparse.txt", b"\n".join(lines))


CASES = [
    # trace.dat v6
    Case("v6-page-size-0", dat(V6, lambda d, l: patch(d, l.page_size_at, "<I", 0)), "bad page size 0"),
    Case("v6-page-size-2GiB", dat(V6, lambda d, l: patch(d, l.page_size_at, "<I", 1 << 31)), "bad page size"),
    Case("v6-format-size-4GiB", dat(V6, lambda d, l: patch(d, l.formats[0][0], "<Q", 1 << 32)), "event format of 4294967296 bytes"),
    Case("v6-format-10MB-field-name", dat(V6, ten_mb_field_name), "event format of 104"),
    Case("v6-format-count-2G", dat(V6, lambda d, l: patch(d, l.formats[0][0] - 4, "<I", 1 << 31)), "ftrace formats"),
    Case("v6-header-page-overlap", dat(V6, header_page_overlap), "header_page fields overlap"),
    Case("v6-kallsyms-size-lie", dat(V6, lambda d, l: patch(d, v6_after_formats(d, l), "<I", 0xFFFFFFFF)), "kallsyms claims 4294967295 bytes"),
    Case("v6-cpu-count-4G", dat(V6, lambda d, l: patch(d, _v6_ncpus(d, l), "<I", 0xFFFFFFFF)), "CPUs does not fit"),
    Case("v6-cpu-data-past-end", dat(V6, lambda d, l: patch(d, l.cpus[1].entry, "<Q", len(d) + (1 << 40))), "CPU 1 data is truncated", kept=True),
    Case("v6-cpu-size-1TiB", dat(V6, lambda d, l: patch(d, l.cpus[1].entry + 8, "<Q", 1 << 40)), "CPU 1 data is truncated", kept=True),
    Case("v6-cpu-data-overlap", dat(V6, lambda d, l: patch(d, l.cpus[1].entry, "<Q", l.cpus[0].offset + 4096)), "overlaps the data of CPU 0"),
    Case("v6-page-commit-lie", dat(V6, lambda d, l: patch(d, first_page(l) + 4096 + 8, "<Q", 9000)), "page commit says 9000 bytes", kept=True),
    Case("v6-event-length-1GiB", dat(V6, event_length_lie), "corrupt page", kept=True),
    Case("v6-cut-mid-page", dat(V6, lambda d, l: d[: l.cpus[1].offset + 5 * 4096 + 1000]), "CPU 1 data is truncated", kept=True),
    # A v6 instance: its BUFFER option holds the offset of its CPU table.
    Case("v6-instance-table-past-end", dat(V6_INSTANCE, lambda d, l: patch(d, l.option_fields[L.OPT_BUFFER], "<Q", len(d) + (1 << 40))),
         "", expect=0),
    Case("v6-instance-cpu-size-1TiB", dat(V6_INSTANCE, lambda d, l: patch(d, v6_instance_cpu0(d, l) + 16 + 8, "<Q", 1 << 40)),
         "instance wa: CPU 1 data is truncated", kept=True),
    # trace.dat v7
    Case("v7-options-past-end", dat(V7_NONE, lambda d, l: patch(d, l.options_at, "<Q", len(d) + 100)), "truncated file: a section is at offset"),
    Case("v7-options-loop", dat(V7_NONE, lambda d, l: patch(d, l.option_fields[L.OPT_DONE], "<Q", struct.unpack_from("<Q", d, l.options_at)[0])), "options sections form a loop"),
    Case("v7-section-size-4GiB", dat(V7_NONE, lambda d, l: patch(d, l.sections[L.SEC_HEADER_INFO] + 8, "<Q", 1 << 32)), "section claims 4294967296 bytes"),
    Case("v7-section-past-end", dat(V7_NONE, lambda d, l: patch(d, l.option_fields[L.SEC_FORMATS], "<Q", len(d) + 4096)), "truncated file: a section is at offset"),
    Case("v7-buffer-cpus-1M", dat(V7_NONE, lambda d, l: patch(d, buffer_cpus_field(l), "<I", 1 << 20)), "BUFFER option claims 1048576 CPUs"),
    Case("v7-buffer-page-size-0", dat(V7_NONE, lambda d, l: patch(d, buffer_cpus_field(l) - 4, "<I", 0)), "bad page size 0"),
    # Symbols only name pointers: an unreadable kallsyms costs them, not the events.
    Case("v7-kallsyms-usize-lie", dat(V7_KALLSYMS, section_usize_lie(L.SEC_KALLSYMS)), "", expect=0),
    Case("v7-unknown-compression", dat(V7_ZSTD, lambda d, l: d.replace(b"zstd\0", b"lzma\0", 1)), 'unknown compression "lzma"'),
    Case("v7-zstd-chunk-zsize-lie", dat(V7_ZSTD, lambda d, l: patch(d, l.cpus[0].chunks[4][0], "<I", 0xFFFFFFF0)), "compressed chunk claims", kept=True),
    Case("v7-zstd-chunk-usize-lie", dat(V7_ZSTD, lambda d, l: patch(d, l.cpus[1].chunks[5][0] + 4, "<I", l.cpus[1].chunks[5][2] + 4096)), "compressed block gave 40960 bytes, header says 45056", kept=True),
    Case("v7-zstd-chunk-bomb-1GiB", dat(V7_ZSTD, lambda d, l: replace_chunk(d, l, 1, 3, bomb_chunk(1 << 30))), "(limit 67108864)", kept=True),
    Case("v7-zstd-bombs-every-cpu", dat(V7_ZSTD, bomb_on_every_cpu), "more than this CPU's share of the decompression budget", kept=True),
    Case("v7-zstd-formats-bomb-200MiB", dat(V7_ZSTD, formats_bomb), "claims 209715200 uncompressed bytes (limit 67108864)"),
    Case("v7-zlib-chunk-garbage", dat(V7_ZLIB, zlib_chunk_garbage), "cannot decompress zlib block", kept=True),
    Case("v7-zlib-section-usize-lie", dat(V7_ZLIB, section_usize_lie(L.SEC_FORMATS)), "compressed block gave"),
    # event format descriptions
    Case("format-5000-fields", dat(V7_NONE, v7_formats(lambda b: first_format(b, many_fields))), "more than 1024 fields", kept=True),
    Case("format-512KiB-field-name", dat(V7_NONE, v7_formats(lambda b: first_format(b, half_mb_field_name))), "bad field declaration", kept=True),
    Case("format-offsets-4GiB", dat(V7_NONE, v7_formats(lambda b: first_format(b, field_offsets_beyond))), "lies beyond any event", kept=True),
    Case("format-events-in-system-2G", dat(V7_NONE, v7_formats(lambda b: patch(b, b.index(b"\0", 4) + 1, "<I", 1 << 31))), "events in system"),
    # ftrace text
    Case("text-binary-block", text_with(0.5, bytes((i * 131 + 7) & 0xFF for i in range(4096)) + b"\n"), "not an event line", kept=True),
    Case("text-10MB-line", text_with(0.3, b"x" * (10 << 20) + b"\n"), "longer than 65536 bytes", kept=True),
    Case("text-100MB-field", text_event_line(b" huge=" + b"A" * (100 << 20)), "longer than 65536 bytes", kept=True),
    Case("text-300-fields-of-1MB", text_event_line(b"".join(b" f%d=" % i + b"B" * (1 << 20) for i in range(300))),
         "longer than 65536 bytes", kept=True),
    Case("text-100MB-comm", text_event_line(comm=b"C" * (100 << 20)), "longer than 65536 bytes", kept=True),
    Case("text-1000-byte-comm", text_event_line(comm=b"c" * 1000), "task name of 1000 bytes", kept=True),
    Case("text-one-value-of-another-type", text_retyping_value, "not of their column's type", kept=True),
    Case("text-5000-event-types", text_event_types, "beyond the limit of 512 types: 4516 events of 512 or more types skipped", kept=True),
    Case("text-timestamps-overflow", text_bad_timestamps, "bad timestamp", kept=True),
    # blktrace binary
    Case("blk-pdu-len-lie", lambda t: blk_set(t, pdu_len_lie), "payload", kept=True),
    Case("blk-bad-magic-mid-file", lambda t: blk_set(t, blk_magic), "bad magic", kept=True),
    Case("blk-bad-version-mid-file", lambda t: blk_set(t, blk_version), "version", kept=True),
    Case("blk-cut-mid-record", lambda t: blk_set(t, blk_cut), "truncated record", kept=True),
    Case("blk-sequence-jump-1G", lambda t: blk_set(t, blk_seq_jump), "", expect=0),
    Case("blk-merged-garbage", merged_garbage, "offset 0x", kept=True),
    Case("blk-stdin-pdu-len-lie", stdin_pdu_lie, "stdin", kept=True),
    # blkparse text
    Case("blkparse-10MB-line", blkparse_with(b"8,0 " * (5 << 19) + b"\n"), "longer than 65536 bytes", kept=True),
    Case("blkparse-binary-block", blkparse_with(bytes((i * 131 + 7) & 0xFF for i in range(4096)) + b"\n"), "not a blkparse event line", kept=True),
    Case("blkparse-sector-overflow", blkparse_huge_sector, "not a blkparse event line", kept=True),
]


def _v6_ncpus(d: bytes, lay: L.Layout) -> int:
    """File offset of the v6 CPU count (just before the options/flyrecord tags)."""
    p = v6_after_formats(d, lay)
    p += 4 + struct.unpack_from("<I", d, p)[0]
    p += 4 + struct.unpack_from("<I", d, p)[0]
    return p + 8 + struct.unpack_from("<Q", d, p)[0]
