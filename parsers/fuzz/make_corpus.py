#!/usr/bin/env python3
"""Build the fuzz seed corpora (parsers/fuzz/corpus/<target>/) from small
slices of the real captures in sample_traces/.

trace.dat seeds keep a real capture's header_page, the formats of the events
on the pages kept, its saved cmdlines and its first ring-buffer pages per
CPU, written back as v6 and as v7 without compression, with zlib and with
zstd (kallsyms and printk left empty, which trace-cmd allows). The other
targets get the first records or lines of each sample. Run from the
repository root: `python3 parsers/fuzz/make_corpus.py` (needs the zstd CLI).
"""

from __future__ import annotations

import hashlib
import shutil
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.hostile import layout as L  # noqa: E402

SAMPLES = ROOT / "sample_traces"
OUT = ROOT / "parsers" / "fuzz" / "corpus"
PAGES_PER_CPU = 2


def put(target: str, data: bytes) -> None:
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


# --- trace.dat -------------------------------------------------------------


def formats_of(body: bytes, systems: bool) -> list[tuple[str, list[bytes]]]:
    """An ftrace-formats body (u32 count, formats) or an event-formats body
    (u32 systems, each: name, u32 count, formats) as [(system, [format text])]."""
    out, p = [], 4
    for _ in range(struct.unpack_from("<I", body)[0] if systems else 1):
        name = b"ftrace"
        if systems:
            name, p = L._cstr(body, p)
        (n,) = struct.unpack_from("<I", body, p if systems else 0)
        p += 4 if systems else 0
        texts = []
        for _ in range(n):
            (size,) = struct.unpack_from("<Q", body, p)
            texts.append(body[p + 8 : p + 8 + size])
            p += 8 + size
        out.append((name.decode(), texts))
    return out


def event_ids(page: bytes) -> set[int]:
    """common_type of every data event on one little-endian ring-buffer page
    (u64 timestamp, u64 commit, events: see parsers/src/tracedat/ring.rs)."""
    (commit,) = struct.unpack_from("<Q", page, 8)
    data, p, ids = page[16 : 16 + (commit & ((1 << 27) - 1))], 0, set()
    while p + 4 <= len(data):
        (head,) = struct.unpack_from("<I", data, p)
        t = head & 0x1F
        if t in (29, 30, 31):
            arg = struct.unpack_from("<I", data, p + 4)[0] if p + 8 <= len(data) else 0
            p += 4 + arg if t == 29 else 8
            continue
        if t == 0:
            (n,) = struct.unpack_from("<I", data, p + 4)
            start, length = p + 8, (n - 4 + 3) & ~3
        else:
            start, length = p + 4, t * 4
        if start + 2 <= len(data):
            ids.add(struct.unpack_from("<H", data, start)[0])
        p = start + length
    return ids


def keep(groups, ids: set[int]):
    def fid(text: bytes) -> int:
        for line in text.splitlines():
            if line.startswith(b"ID:"):
                return int(line[3:])
        return -1

    return [(s, [t for t in ts if fid(t) in ids]) for s, ts in groups]


def ftrace_body(groups) -> bytes:
    texts = groups[0][1]
    return struct.pack("<I", len(texts)) + b"".join(struct.pack("<Q", len(t)) + t for t in texts)


def events_body(groups) -> bytes:
    groups = [(s, ts) for s, ts in groups if ts]
    out = struct.pack("<I", len(groups))
    for s, ts in groups:
        out += s.encode() + b"\0" + struct.pack("<I", len(ts)) + b"".join(struct.pack("<Q", len(t)) + t for t in ts)
    return out


def pieces_v6(d: bytes):
    lay = L.parse(d)
    p = lay.header_page_at + 12
    p += 8 + struct.unpack_from("<Q", d, p)[0] + 13
    p += 8 + struct.unpack_from("<Q", d, p)[0]
    header_info = d[lay.header_page_at : p]
    ftrace_at = p
    events_at = lay.formats[struct.unpack_from("<I", d, ftrace_at)[0] - 1][0]
    events_at += 8 + struct.unpack_from("<Q", d, events_at)[0] if struct.unpack_from("<I", d, ftrace_at)[0] else 4
    q = events_at
    formats_end = lay.formats[-1][0] + 8 + lay.formats[-1][1]
    q = formats_end
    q += 4 + struct.unpack_from("<I", d, q)[0]  # kallsyms
    q += 4 + struct.unpack_from("<I", d, q)[0]  # printk
    cmdlines = d[q : q + 8 + struct.unpack_from("<Q", d, q)[0]]
    return lay, header_info, d[ftrace_at:events_at], d[events_at:formats_end], cmdlines


def pieces_v7(d: bytes):
    lay = L.parse(d)

    def body(sid):
        at = lay.sections[sid]
        _, flags, _, size = struct.unpack_from("<HHIQ", d, at)
        b = d[at + 16 : at + 16 + size]
        return L.decompress(lay.codec, b[8 : 8 + struct.unpack_from("<I", b)[0]]) if flags & 1 else b

    return lay, body(L.SEC_HEADER_INFO), body(L.SEC_FTRACE), body(L.SEC_FORMATS), body(L.SEC_CMDLINES)


def option(oid: int, data: bytes) -> bytes:
    return struct.pack("<HI", oid, len(data)) + data


def write_v6(header_info, ftrace, events, cmdlines, pages, ps=4096) -> bytes:
    out = L.MAGIC + b"6\0" + bytes([0, 8]) + struct.pack("<I", ps) + header_info + ftrace + events
    out += struct.pack("<II", 0, 0) + cmdlines + struct.pack("<I", len(pages))
    out += b"options  \0" + option(5, b"Linux fuzz 6.1.0 #1 x86_64\0") + struct.pack("<H", 0) + b"flyrecord\0"
    table_at = len(out)
    out += bytes(16 * len(pages))
    out += bytes(-len(out) % ps)
    table = b""
    for cpu_pages in pages:
        table += struct.pack("<QQ", len(out), len(cpu_pages) * ps)
        out += b"".join(cpu_pages)
    return out[:table_at] + table + out[table_at + len(table) :]


def section(sid: int, body: bytes, codec: str) -> bytes:
    if codec == "none":
        return struct.pack("<HHIQ", sid, 0, 0, len(body)) + body
    z = L.compress(codec, body)
    payload = struct.pack("<II", len(z), len(body)) + z
    return struct.pack("<HHIQ", sid, 1, 0, len(payload)) + payload


def write_v7(header_info, ftrace, events, cmdlines, pages, codec: str, ps=4096) -> bytes:
    head = L.MAGIC + b"7\0" + bytes([0, 8]) + struct.pack("<I", ps) + codec.encode() + b"\0" + (b"" if codec == "none" else b"1") + b"\0"
    out = bytearray(head + bytes(8))
    offs = {}
    for sid, body in ((16, header_info), (17, ftrace), (18, events), (21, cmdlines)):
        offs[sid] = len(out)
        out += section(sid, body, codec)
    second_at_field = None
    opts = b"".join(option(sid, struct.pack("<Q", o)) for sid, o in offs.items())
    opts += option(5, b"Linux fuzz 6.1.0 #1 x86_64\0") + option(8, struct.pack("<I", len(pages)))
    first = len(out)
    # Options are never compressed here; the DONE option links the next options section.
    sec = struct.pack("<HHIQ", 0, 0, 0, len(opts) + 14) + opts + option(0, bytes(8))
    second_at_field = first + len(sec) - 8
    out += sec
    struct.pack_into("<Q", out, len(head), first)
    # Flyrecord data: whole pages, or a chunk table of compressed chunks.
    fly_at = len(out)
    out += struct.pack("<HHIQ", 3, 0 if codec == "none" else 1, 0, 0)
    out += bytes(-len(out) % ps)
    cpus = []
    for cpu, cpu_pages in enumerate(pages):
        at = len(out)
        data = b"".join(cpu_pages)
        if codec == "none":
            out += data
            cpus.append((cpu, at, len(data)))
        else:
            z = L.compress(codec, data)
            out += struct.pack("<III", 1, len(z), len(data)) + z
            cpus.append((cpu, at, 8 + len(z)))
    buf = struct.pack("<Q", fly_at) + b"\0local\0" + struct.pack("<II", ps, len(cpus))
    buf += b"".join(struct.pack("<IQQ", *c) for c in cpus)
    opts2 = option(3, buf) + option(0, bytes(8))
    struct.pack_into("<Q", out, second_at_field, len(out))
    out += struct.pack("<HHIQ", 0, 0, 0, len(opts2)) + opts2
    return bytes(out)


def tracedat_seeds() -> None:
    for name, reader in (("sync-xfs-v6.dat", pieces_v6), ("snapshot-btrfs-v7-none.dat", pieces_v7), ("fio-ext4-v7-zstd.dat", pieces_v7)):
        d = (SAMPLES / name).read_bytes()
        lay, header_info, ftrace, events, cmdlines = reader(d)
        pages = []
        for c in lay.cpus:
            if c.chunks:
                r, zs, _ = c.chunks[0]
                data = L.decompress(lay.codec, d[r + 8 : r + 8 + zs])
            else:
                data = d[c.offset : c.offset + c.size]
            pages.append([data[i * 4096 : (i + 1) * 4096] for i in range(PAGES_PER_CPU)])
        ids = set().union(*(event_ids(p) for cp in pages for p in cp))
        ft = ftrace_body(keep(formats_of(ftrace, False), ids))
        ev = events_body(keep(formats_of(events, True), ids))
        cmd = struct.pack("<Q", len(cmdlines) - 8) + cmdlines[8:] if len(cmdlines) < 600 else _short_cmdlines(cmdlines)
        put("tracedat", write_v6(header_info, ft, ev, cmd, pages))
        for codec in ("none", "zlib", "zstd"):
            put("tracedat", write_v7(header_info, ft, ev, cmd, pages, codec))
        # The event-format parser: each kept format alone, plus the header_page text.
        for _, texts in keep(formats_of(events, True), ids) + keep(formats_of(ftrace, False), ids):
            for t in texts[:12]:
                put("event_format", t)
        put("event_format", header_info[20 : 20 + struct.unpack_from("<Q", header_info, 12)[0]])


def _short_cmdlines(c: bytes) -> bytes:
    text = b"\n".join(c[8:].split(b"\n")[:20]) + b"\n"
    return struct.pack("<Q", len(text)) + text


# --- the others -------------------------------------------------------------


def inflate_seeds() -> None:
    d = (SAMPLES / "sync-xfs-v6.dat").read_bytes()
    page = d[77824 : 77824 + 4096]
    for codec, byte in (("zlib", 0), ("zstd", 1)):
        z = L.compress(codec, page)
        put("inflate", bytes([byte]) + struct.pack("<I", len(page)) + z)


def blktrace_seeds() -> None:
    for stem in ("blk-ext4-fsync", "blk-dm-split-remap", "blk-dm-cgroup", "blk-lost-events"):
        cpu0 = next(SAMPLES.glob(f"{stem}*.blktrace.0")).read_bytes()
        cpu1 = next(SAMPLES.glob(f"{stem}*.blktrace.1")).read_bytes()
        a = cpu0[: sum(n for _, n in L.blk_records(cpu0, 24))]
        b = cpu1[: sum(n for _, n in L.blk_records(cpu1, 24))]
        put("blktrace", b"\x02" + struct.pack("<H", len(a)) + a + b)
        merged = (SAMPLES / f"{stem}.bin").read_bytes()
        put("blktrace", b"\x00" + merged[: sum(n for _, n in L.blk_records(merged, 40))])
    stream = (SAMPLES / "blk-stdin-stream.stream").read_bytes()
    put("blktrace", b"\x01" + stream[: sum(n for _, n in L.blk_records(stream, 40))])


def text_seeds() -> None:
    for f in sorted(SAMPLES.glob("*.blkparse.txt")) + [SAMPLES / "blk-stdin-stream.blkparse.txt"]:
        lines = f.read_bytes().splitlines(keepends=True)
        put("blkparse_text", b"".join(lines[:30]) + b"".join(lines[-12:]))
    for f in sorted(SAMPLES.glob("tracefs-ext4.*.txt")):
        lines = f.read_bytes().splitlines(keepends=True)
        put("ftrace_text", b"".join(lines[:40]))
        # Fields printed by position ("block_rq_issue: 7,0 RM 4096 () 33928 + 8 0x2,0,4 [dd]")
        # and device first ("writeback_dirty_inode_enqueue: dev 7,0 ino 12 ... mode 0100644").
        positional = [line for line in lines if b" block_" in line or b": dev " in line]
        put("ftrace_text", b"".join(lines[:12] + positional[:40]))


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    tracedat_seeds()
    inflate_seeds()
    blktrace_seeds()
    text_seeds()
    for d in sorted(OUT.iterdir()):
        files = list(d.iterdir())
        print(f"{d.name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
