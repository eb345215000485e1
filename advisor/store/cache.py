"""Stores cached per input: captures are parsed once, then their store is
reused while the files' content (BLAKE3) and the parser and store versions
match."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from advisor import parsers
from advisor.errors import TraceIOError
from advisor.store import blk_views
from advisor.store.ingest import STORE_VERSION, Inputs, IngestResult, Progress, ingest


def cache_dir() -> Path:
    env = os.environ.get("WRITEBACK_ADVISOR_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "writeback-advisor"


def cache_path(digest: str) -> Path:
    return cache_dir() / f"{digest[:32]}-p{parsers.PARSER_VERSION}-s{STORE_VERSION}.duckdb"


def is_store(path: Path) -> bool:
    """A DuckDB database file (by its header), as opposed to a trace."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror}") from None
    return head[8:12] == b"DUCK"


def store_for(traces: list[Path] | Path, progress: Progress | None = None, force: bool = False) -> IngestResult:
    """The cached store of one incident's captures, ingesting them first if needed."""
    paths = [Path(p) for p in (traces if isinstance(traces, list) else [traces])]
    inputs = Inputs.classify(paths)
    digest = inputs.digest()
    path = cache_path(digest)
    if path.exists() and not force:
        return load_result(inputs.paths, path, digest)
    return ingest(inputs.paths, path, digest, progress)


def load_result(traces: list[Path], store: Path, digest: str) -> IngestResult:
    """Summarise an existing store the way an ingest would have."""
    with duckdb.connect(str(store), read_only=True) as con:
        info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
        stats = [tuple(r) for r in con.execute("SELECT * FROM parse_stats").fetchall()]
        counts = dict(con.execute("SELECT table_name, events FROM event_formats WHERE events > 0").fetchall())
        blk = {a: int(n) for a, n in con.execute(blk_views.ACTION_COUNTS).fetchall()} if blk_views.has_blk(con) else {}
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


def open_store(path: Path, read_only: bool = True):
    """A DuckDB connection to a store."""
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as e:
        raise TraceIOError(f"{path}: cannot open store: {e}") from None
