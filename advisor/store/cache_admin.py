"""What the store cache holds, and how to shrink it: `advisor cache list|size|clear`, and
the optional size cap ($WRITEBACK_ADVISOR_CACHE_MAX, e.g. 2G) applied after each command.

Only files named as cache.py names stores (`<32 hex>-p<parser>-s<store>.duckdb`, with
DuckDB's `.wal` and the store's Parquet parts directory next to one) are counted or removed: anything else a user put in the
directory is left alone. Stores are rebuilt from their captures on next use, so removing
one loses nothing but the time to ingest again.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from advisor.errors import UsageError
from advisor.store import parts, readers, replace
from advisor.store.cache import cache_dir
from advisor.store.connect import connect

STORE_NAME = re.compile(r"^[0-9a-f]{32}-p[0-9A-Za-z.+-]+-s\d+\.duckdb$")
CAP_VARIABLE = "WRITEBACK_ADVISOR_CACHE_MAX"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


@dataclass
class CachedStore:
    path: Path
    bytes: int  # the store, its write-ahead log and its Parquet parts
    modified: float  # unix time of the last write (the ingest)
    facts: dict  # from its trace_info: format, kernel, events; empty when it cannot be read

    def as_dict(self) -> dict:
        return {"store": str(self.path), "bytes": self.bytes,
                "ingested": datetime.fromtimestamp(self.modified, timezone.utc).isoformat(timespec="seconds"), **self.facts}


def stores(directory: Path | None = None, facts: bool = True) -> list[CachedStore]:
    """The cached stores, least recently written first."""
    d = directory or cache_dir()
    if not d.is_dir():
        return []
    out = []
    for p in d.iterdir():
        if not STORE_NAME.match(p.name):
            continue
        try:
            st = p.stat()
        except FileNotFoundError:  # removed meanwhile (another advisor's clear)
            continue
        wal = p.with_name(p.name + ".wal")
        size = st.st_size + (wal.stat().st_size if wal.exists() else 0)
        size += sum(parts.size(d) for d in parts.directories(p))
        out.append(CachedStore(p, size, st.st_mtime, _facts(p) if facts else {}))
    return sorted(out, key=lambda s: s.modified)


# What a store leaves beside it besides its parts directories: DuckDB's write-ahead log
# and the checksum cache.py keeps.
_SIDE_FILES = (".wal", ".blake3")


def orphans(directory: Path | None = None) -> list[tuple[Path, int]]:
    """What stores removed by hand left behind, with its bytes: `<store>.<token>.parts`
    directories, which nothing reads or removes again, and the store's `.wal` and
    `.blake3`. A parts directory whose writer is alive (an ingest still writing it) is
    not one, nor a side file while any writer of its store is alive (an ingest writes the
    checksum just before it renames the store into place)."""
    d = directory or cache_dir()
    if not d.is_dir():
        return []
    out = []
    for p in d.iterdir():
        if p.name.endswith(parts.SUFFIX):
            name, _, token = p.name[: -len(parts.SUFFIX)].rpartition(".")
            store = d / name
            if not STORE_NAME.match(name) or store.exists() or not p.is_dir():
                continue
            if replace.writer_alive(store, token) is not False:
                continue
            out.append((p, parts.size(p)))
        elif _stray_side_file(p):
            try:
                out.append((p, p.stat().st_size))
            except FileNotFoundError:
                continue
    return sorted(out)


def _store_of(side_file: Path) -> Path | None:
    """The store a `.wal` or `.blake3` belongs to, by name."""
    for suffix in _SIDE_FILES:
        if side_file.name.endswith(suffix) and STORE_NAME.match(side_file.name[: -len(suffix)]):
            return side_file.with_name(side_file.name[: -len(suffix)])
    return None


def _stray_side_file(p: Path) -> bool:
    store = _store_of(p)
    if store is None or store.exists() or not p.is_file():
        return False
    return not replace.any_writer_alive(store)


def remove_orphans(directory: Path | None = None, older_than_s: float | None = None, now: float | None = None) -> int:
    """Remove what `orphans` finds (written more than `older_than_s` ago, when given),
    parts directories only when no reader holds them; the bytes freed."""
    now = now if now is not None else datetime.now(timezone.utc).timestamp()
    freed = 0
    for p, n in orphans(directory):
        try:
            if older_than_s is not None and now - p.stat().st_mtime < older_than_s:
                continue
        except FileNotFoundError:
            continue
        if p.is_dir():
            with readers.unread(p) as free:
                if free:
                    freed += parts.remove(p)
            continue
        # Under the lock a store is published under, and checked again: an ingest that
        # wrote this checksum may have renamed its store into place since.
        with replace.publishing(_store_of(p)):
            if _stray_side_file(p):
                p.unlink(missing_ok=True)
                freed += n
    return freed


def _facts(path: Path) -> dict:
    """What capture a store holds, from its trace_info table."""
    try:
        with connect(path, read_only=True) as con:
            info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
            events = con.execute("SELECT coalesce(sum(events), 0) FROM event_formats").fetchone()[0]
    except duckdb.Error:
        return {}  # being written by an ingest right now, or not readable
    fmt = info.get("format") or ("blktrace" if info.get("blktrace_files") else None)
    return {"format": fmt, "kernel": info.get("kernel_release"), "events": int(events),
            "blk_events": int(info.get("blktrace_events") or 0),
            "blktrace": info.get("blktrace_files"), "partial": info.get("partial") == "true"}


def total_bytes(directory: Path | None = None) -> int:
    return sum(s.bytes for s in stores(directory, facts=False)) + sum(n for _, n in orphans(directory))


def remove(store: CachedStore) -> int:
    """Delete one store, its log, its checksum and its parts; the bytes freed."""
    freed = sum(parts.remove(d) for d in parts.directories(store.path))
    for p in (store.path, store.path.with_name(store.path.name + ".wal"), store.path.with_name(store.path.name + ".blake3")):
        try:
            size = p.stat().st_size
            p.unlink()
            freed += size
        except FileNotFoundError:
            pass
    return freed


def clear(directory: Path | None = None, keep_bytes: int | None = None, older_than_s: float | None = None,
          now: float | None = None) -> list[CachedStore]:
    """Remove stores, least recently written first: all of them; or those older than
    `older_than_s`; or as many as needed for the rest to fit in `keep_bytes`."""
    now = now if now is not None else datetime.now(timezone.utc).timestamp()
    held = stores(directory, facts=False)
    total = sum(s.bytes for s in held)
    removed = []
    for s in held:
        if older_than_s is not None and now - s.modified < older_than_s:
            continue
        if keep_bytes is not None and total <= keep_bytes:
            break
        total -= remove(s)
        removed.append(s)
    return removed


def parse_size(text: str) -> int:
    """"500M", "2G", "1.5G", "1048576" (bytes, powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.I)
    if not m:
        raise UsageError(f"{text!r} is not a size (e.g. 500M, 2G, 1048576)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def enforce_cap() -> None:
    """With $WRITEBACK_ADVISOR_CACHE_MAX set, keep the cache under it (after a command)."""
    cap = os.environ.get(CAP_VARIABLE)
    if not cap:
        return
    try:
        keep = parse_size(cap)
        remove_orphans()
        clear(keep_bytes=keep)
    except UsageError as e:
        raise UsageError(f"${CAP_VARIABLE}: {e}") from None
    except OSError:
        pass  # a cache we cannot prune is not worth failing the command for


def human(n: int) -> str:
    """Bytes as `du -h` prints them."""
    for unit in ("B", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)
