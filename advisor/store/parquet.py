"""A store as a Parquet dataset that a fleet of captures shares:

    DIR/<table>/host=<host>/capture=<capture id>/data.parquet

One directory per table (tables differ in columns), partitioned Hive-style by the
machine the capture came from and the capture (the first 16 hex digits of the inputs'
BLAKE3 content hash, so writing the same capture again replaces its files, and two
captures never collide). DuckDB, Spark and Trino read a table of every capture with
the partition keys as columns:

    SELECT host, capture, count(*) FROM read_parquet('DIR/events/**/*.parquet',
        hive_partitioning = true, hive_types_autocast = false) GROUP BY ALL
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Callable

from advisor.errors import TraceIOError
from advisor.store import blk_views
from advisor.store.ddl import ident

FILE = "data.parquet"
# What is safe in a path component and a Hive partition value ("/", "=", "%" are not).
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe(value: str) -> str:
    s = _UNSAFE.sub("_", value).strip("._")
    return s or "unknown"


def host_of(con) -> str:
    """The capture's machine name: trace.dat and ftrace text record `uname -a`
    ("Linux vm 6.18.44 #1 SMP ...": the node name is the second word)."""
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    if info.get("hostname"):
        return safe(info["hostname"])
    words = (info.get("uname") or "").split()
    return safe(words[1]) if len(words) > 1 else "unknown"


def tables_of(con) -> list[str]:
    """The tables a user queries: every event table with rows, `events`, the capture's
    facts, and the blktrace tables when present."""
    events = [r[0] for r in con.execute("SELECT table_name FROM event_formats WHERE events > 0 ORDER BY table_name").fetchall()]
    fixed = ["events", "trace_info", "parse_stats"] if events else ["trace_info", "parse_stats"]
    blk = ["blk_events", "io_requests", "io_phases"] if blk_views.has_blk(con) else []
    return fixed + blk + events


def export(con, out_dir: Path, capture: str, progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the store's tables under out_dir; returns {host, capture, tables: {name: rows}}."""
    host = host_of(con)
    capture = safe(capture)
    tables = tables_of(con)
    written = {}
    for i, name in enumerate(tables):
        part = out_dir / safe(name) / f"host={host}" / f"capture={capture}"
        try:
            if part.exists():
                shutil.rmtree(part)
            part.mkdir(parents=True)
        except OSError as e:
            raise TraceIOError(f"{part}: {e.strerror}") from None
        target = str(part / FILE).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM {ident(name)}) TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
        written[name] = con.fetchone()[0]
        if progress:
            progress(i + 1, len(tables))
    return {"host": host, "capture": capture, "directory": str(out_dir), "tables": written}
