"""Stores cached per input: captures are parsed once, then their store is
reused while the files' content (BLAKE3) and the parser and store versions
match."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import duckdb

from advisor.errors import TraceIOError, UsageError
from advisor.store import blk_views, parts, readers
from advisor.store.connect import connect
from advisor.store.ingest import STORE_VERSION, IngestResult, Inputs, Progress, StoreWriteError, check_target, ingest, store_digest
from advisor.store.replace import current_token
from advisor.store_settings import cache_dir, cache_path


def is_store(path: Path) -> bool:
    """A DuckDB database file (by its header), as opposed to a trace."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror}") from None
    return head[8:12] == b"DUCK"


def store_for(
    traces: list[Path] | Path,
    progress: Progress | None = None,
    force: bool = False,
    warn: Callable[[str], None] | None = None,
) -> IngestResult:
    """The cached store of one incident's captures, ingesting them first if
    needed. A cached store that is damaged (a truncated file, blocks that fail
    DuckDB's checksums, tables missing) is said (`warn`) and built again."""
    paths = [Path(p) for p in (traces if isinstance(traces, list) else [traces])]
    inputs = Inputs.classify(paths)
    digest = inputs.digest()
    path = cache_path(digest)
    if path.exists() and not force:
        try:
            return load_result(inputs.paths, path, digest, verify=True)
        except DamagedStoreError as e:
            (warn or _stderr_warning)(f"{e}; building it again")
    try:
        return ingest(inputs.paths, path, digest, progress, checksum=checksum_path(path))
    except StoreWriteError as e:
        raise StoreWriteError(f"{e} (the cache is {cache_dir()}; WRITEBACK_ADVISOR_CACHE names another)") from None


class DamagedStoreError(TraceIOError):
    """A store file that DuckDB cannot read whole."""


def _stderr_warning(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def checksum_path(store: Path) -> Path:
    """Where the BLAKE3 of a cached store is kept, beside it."""
    return store.with_name(store.name + ".blake3")


def check_checksum(store: Path) -> None:
    """The cached store is the file its ingest finished: any byte changed
    since (a disk error, a copy cut short, a write by another program) shows
    here, where DuckDB's own block checksums show only once a query reads
    the damaged block. Hashing is fast (about 2.5 GB/s; 6 ms for a 15 MB store)."""
    try:
        want, _, token = checksum_path(store).read_text().strip().partition(" ")
    except FileNotFoundError:
        raise DamagedStoreError(f"{store}: cached store has no checksum (written by an earlier version, or cut short)") from None
    except OSError as e:
        raise DamagedStoreError(f"{store}: cached store's checksum is unreadable ({e.strerror})") from None
    token = token or current_token(store)  # a checksum written before the token was
    parts_dir = parts.directory(store, token) if token else None
    try:
        have = store_digest(store, parts_dir)
    except OSError as e:
        raise DamagedStoreError(f"{store}: cached store's tables are unreadable ({e.filename}: {e.strerror})") from None
    if have != want:
        raise DamagedStoreError(f"{store}: cached store is damaged (its content no longer matches its checksum)")


def load_result(traces: list[Path], store: Path, digest: str, verify: bool = False) -> IngestResult:
    """Summarise an existing store the way an ingest would have; `verify`:
    check a cached store's checksum first."""
    if verify:
        check_checksum(store)
    try:
        with connect(store, read_only=True) as con:
            check_whole(con, store)
            info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
            stats = [tuple(r) for r in con.execute("SELECT * FROM parse_stats").fetchall()]
            counts = dict(con.execute("SELECT table_name, events FROM event_formats WHERE events > 0").fetchall())
            blk = {a: int(n) for a, n in con.execute(blk_views.ACTION_COUNTS).fetchall()} if blk_views.has_blk(con) else {}
    except duckdb.Error as e:
        raise DamagedStoreError(f"{store}: cached store is damaged ({str(e).strip().splitlines()[0]})") from None
    if info.get("store_version") != str(STORE_VERSION):
        raise DamagedStoreError(f"{store}: cached store has no complete trace_info")
    return IngestResult(
        traces=traces,
        store=store,
        digest=digest,
        cached=True,
        seconds=0.0,
        info=info,
        events_by_type=counts,
        stats=stats,
        damaged=info.get("partial") == "true",
        damage=[d for d in info.get("damage", "").split("\n") if d],
        blk_actions=blk,
    )


#: A DuckDB file starts with its main header and two database headers of 4 KiB
#: each; its blocks follow. https://duckdb.org/docs/stable/internals/storage
_HEADERS = 3 * 4096


def check_whole(con, store: Path) -> None:
    """The file holds every block its header counts: a store cut short (a
    disk that filled, a copy that stopped) can still open, and fail later on
    the first query that reads past the end."""
    _, _, block_size, total_blocks, *_ = con.execute("PRAGMA database_size").fetchone()
    want = _HEADERS + int(block_size) * int(total_blocks)
    have = store.stat().st_size
    if have < want:
        raise DamagedStoreError(f"{store}: cached store is damaged (truncated: {have} of {want} bytes)")


def advisor_wrote(path: Path) -> bool:
    """A store this tool wrote (a DuckDB file with the advisor's trace_info),
    as opposed to any other file `--force` must not replace."""
    try:
        if not path.is_file() or not is_store(path):
            return False
        with connect(path, read_only=True) as con:
            keys = {k for (k,) in con.execute("SELECT key FROM trace_info").fetchall()}
    except (duckdb.Error, TraceIOError, OSError):
        return False
    return {"store_version", "parser_version", "inputs_blake3"} <= keys


def check_output(path: Path, force: bool) -> None:
    """`ingest -o PATH`: a new file, or with --force a store this tool wrote;
    never a device, a directory or someone else's file."""
    check_target(path)
    if not path.exists():
        return
    if not force:
        raise UsageError(f"{path}: exists (use --force to overwrite)")
    if not advisor_wrote(path):
        raise UsageError(f"{path}: exists and is not a store written by advisor; --force replaces only those")


def open_store(path: Path, read_only: bool = True):
    """A DuckDB connection to a store."""
    try:
        return readers.connect_held(path, read_only=read_only)
    except duckdb.Error as e:
        raise TraceIOError(f"{path}: cannot open store: {e}") from None


def given_store(store: Path) -> Path:
    """A store file the user named (not the cache's): when it was moved with its
    parts directory, its views still name the directory's old path; they are
    pointed at the one beside it (the catalog is rewritten in place)."""
    try:
        with connect(store, read_only=True) as con:
            row = con.execute("SELECT value FROM trace_info WHERE key = 'parts_token'").fetchone()
            old = parts.read_by(con)
    except duckdb.Error:
        return store  # not this tool's store, or damaged: the first query says why
    if not row or old is None:
        return store  # every table inside the file (--single-file), or no rows at all
    here = parts.directory(store.resolve(), row[0])
    if old == here:
        return store
    if not here.is_dir():
        if old.is_dir():
            return store  # the catalog was copied alone; its tables are where it was written
        raise TraceIOError(f"{store}: its tables ({here.name}/) are not beside it; move that directory with the store, or ingest again")
    try:
        with connect(store) as con:
            views = con.execute("SELECT sql FROM duckdb_views() WHERE sql LIKE '%read_parquet(%'").fetchall()
            old_lit, new_lit = str(old).replace("'", "''"), str(here).replace("'", "''")
            con.execute("\n".join(
                sql.replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1).replace(f"'{old_lit}/", f"'{new_lit}/")
                for (sql,) in views
            ))
    except duckdb.Error as e:
        raise TraceIOError(f"{store}: moved from {old.parent}, and its views cannot be pointed at {here.name}/ "
                           f"({str(e).splitlines()[0]}); ingest again") from None
    return store
