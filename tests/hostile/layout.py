"""Where things are in a real trace.dat (v6, v7) and blktrace file, so that
hostile inputs can be made by changing one field of a real capture, and
small fuzz seeds cut from one (parsers/fuzz/make_corpus.py).

Only what the mutations need is located; the Rust parser is the reader.
Layouts: trace-cmd.dat.v6(5), trace-cmd.dat.v7(5); blktrace's
`struct blk_io_trace` (48 bytes, pdu_len at 46).
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass, field

MAGIC = b"\x17\x08\x44tracing"
#: v7 section ids (the option ids that point at them) and flags.
OPT_DONE, OPT_BUFFER = 0, 3
SEC_HEADER_INFO, SEC_FTRACE, SEC_FORMATS, SEC_KALLSYMS, SEC_CMDLINES = 16, 17, 18, 19, 21
COMPRESSED = 1
BLK_HEADER = 48


def decompress(codec: str, data: bytes) -> bytes:
    if codec == "zlib":
        return zlib.decompress(data)
    return subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout


def compress(codec: str, data: bytes) -> bytes:
    """One block as trace-cmd writes it (a zstd frame states its size)."""
    if codec == "zlib":
        return zlib.compress(data)
    with tempfile.NamedTemporaryFile() as f:  # from a file, zstd writes the content size
        f.write(data)
        f.flush()
        return subprocess.run(["zstd", "-q", "-c", f.name], capture_output=True, check=True).stdout


@dataclass
class Cpu:
    cpu: int
    offset: int
    size: int
    entry: int  # file offset of this CPU's (offset, size) in the table / BUFFER option
    chunks: list[tuple[int, int, int]] = field(default_factory=list)  # (file offset, zsize, usize)


@dataclass
class Layout:
    version: int
    page_size_at: int  # file offset of the u32 page size
    page_size: int
    formats: list[tuple[int, int]] = field(default_factory=list)  # (offset of the u64 size, size) of each event format (v6)
    cpus: list[Cpu] = field(default_factory=list)
    codec: str = "none"
    options_at: int = 0  # v7: file offset of the u64 "first options section" field
    sections: dict[int, int] = field(default_factory=dict)  # v7: section id -> file offset
    option_fields: dict[int, int] = field(default_factory=dict)  # option id -> file offset of its (first) data
    header_page_at: int = 0  # file offset of the "header_page" tag (v6)


def _cstr(d: bytes, p: int) -> tuple[bytes, int]:
    n = d.index(b"\0", p)
    return d[p:n], n + 1


def parse(d: bytes) -> Layout:
    assert d[:10] == MAGIC
    version = int(_cstr(d, 10)[0])
    p = 10 + 2  # version "6\0" / "7\0"
    ps_at = p + 2
    (page_size,) = struct.unpack_from("<I", d, ps_at)
    p = ps_at + 4
    if version == 6:
        return _v6(d, p, Layout(6, ps_at, page_size))
    return _v7(d, p, Layout(7, ps_at, page_size))


def _v6(d: bytes, p: int, lay: Layout) -> Layout:
    lay.header_page_at = p
    p += 12
    (n,) = struct.unpack_from("<Q", d, p)
    p += 8 + n + 13
    (n,) = struct.unpack_from("<Q", d, p)
    p += 8 + n
    (count,) = struct.unpack_from("<I", d, p)
    p += 4
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", d, p)
        lay.formats.append((p, n))
        p += 8 + n
    (systems,) = struct.unpack_from("<I", d, p)
    p += 4
    for _ in range(systems):
        _, p = _cstr(d, p)
        (count,) = struct.unpack_from("<I", d, p)
        p += 4
        for _ in range(count):
            (n,) = struct.unpack_from("<Q", d, p)
            lay.formats.append((p, n))
            p += 8 + n
    for size_fmt in ("<I", "<I", "<Q"):  # kallsyms, printk, cmdlines
        (n,) = struct.unpack_from(size_fmt, d, p)
        p += struct.calcsize(size_fmt) + n
    (ncpus,) = struct.unpack_from("<I", d, p)
    p += 4
    while True:
        tag = d[p : p + 10]
        p += 10
        if tag == b"options  \0":
            while True:
                oid, = struct.unpack_from("<H", d, p)
                p += 2
                if oid == 0:
                    break
                (n,) = struct.unpack_from("<I", d, p)
                lay.option_fields.setdefault(oid, p + 4)
                p += 4 + n
        elif tag == b"flyrecord\0":
            for c in range(ncpus):
                off, size = struct.unpack_from("<QQ", d, p)
                lay.cpus.append(Cpu(c, off, size, p))
                p += 16
            return lay
        else:
            raise ValueError(f"unexpected tag {tag!r}")


def _v7(d: bytes, p: int, lay: Layout) -> Layout:
    name, p = _cstr(d, p)
    _, p = _cstr(d, p)
    lay.codec = name.decode()
    lay.options_at = p
    (nxt,) = struct.unpack_from("<Q", d, p)
    while nxt:
        sid, flags, _desc, size = struct.unpack_from("<HHIQ", d, nxt)
        body_at = nxt + 16
        body = d[body_at : body_at + size]
        plain = not flags & COMPRESSED
        if not plain:
            zs, _us = struct.unpack_from("<II", body)
            body = decompress(lay.codec, body[8 : 8 + zs])
        q, nxt = 0, 0
        while q < len(body):
            oid, osz = struct.unpack_from("<HI", body, q)
            data_at = q + 6
            data = body[data_at : data_at + osz]
            q = data_at + osz
            if plain:
                lay.option_fields.setdefault(oid, body_at + data_at)
            if oid == OPT_DONE:
                (nxt,) = struct.unpack_from("<Q", data)
                break
            if 16 <= oid <= 25:
                lay.sections[oid] = struct.unpack_from("<Q", data)[0]
            if oid == OPT_BUFFER:
                _buffer(d, data, body_at + data_at if plain else -1, lay)
    return lay


def _buffer(d: bytes, data: bytes, at: int, lay: Layout) -> None:
    (sec,) = struct.unpack_from("<Q", data)
    q = 8
    name, q = _cstr(data, q)
    if name:
        return
    _clock, q = _cstr(data, q)
    lay.sections[OPT_BUFFER] = sec
    _ps, n = struct.unpack_from("<II", data, q)
    q += 8
    (flags,) = struct.unpack_from("<H", d, sec + 2)
    for _ in range(n):
        cpu, off, size = struct.unpack_from("<IQQ", data, q)
        c = Cpu(cpu, off, size, at + q if at >= 0 else -1)
        if flags & COMPRESSED and size:
            (count,) = struct.unpack_from("<I", d, off)
            r = off + 4
            for _ in range(count):
                zs, us = struct.unpack_from("<II", d, r)
                c.chunks.append((r, zs, us))
                r += 8 + zs
        lay.cpus.append(c)
        q += 20


def blk_records(d: bytes, limit: int | None = None) -> list[tuple[int, int]]:
    """(offset, length) of each record of a little-endian blktrace file."""
    out, p = [], 0
    while p + BLK_HEADER <= len(d) and (limit is None or len(out) < limit):
        (pdu,) = struct.unpack_from("<H", d, p + 46)
        out.append((p, BLK_HEADER + pdu))
        p += BLK_HEADER + pdu
    return out
