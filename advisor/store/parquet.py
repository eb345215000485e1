"""A store as a Parquet dataset that a fleet of captures shares:

    DIR/<table>/host=<host>/capture=<capture id>/data.parquet

One directory per table (tables differ in columns), partitioned Hive-style by the
machine the capture came from and the capture (the first 16 hex digits of the inputs'
BLAKE3 content hash, so writing the same capture again replaces its files, and two
captures never collide). DuckDB, Spark and Trino read a table of every capture with
the partition keys as columns:

    SELECT host, capture, count(*) FROM read_parquet('DIR/events/**/*.parquet',
        hive_partitioning = true, hive_types_autocast = false) GROUP BY ALL

The files are written by the parsers' Parquet writer (advisor/store/parts.py), the
one that writes the store's own files while a trace is read, from the store's tables
as DuckDB hands them over in Arrow batches: the same encodings, a row group per batch.
An event table here is its view (`comm` and `tgid` joined from `tasks`), so it cannot
be the stored file itself. Exporting a cached capture of 9.9 M events (21.7 M rows with
`events`) took 3.65-3.73 s, 83 MB, peak RSS 236-243 MiB, against 3.92-4.05 s, 95 MB,
207-211 MiB for DuckDB's COPY ... (FORMAT parquet). Batches of 262,144 rows took DuckDB
to 350 MiB (it holds more of the `events` union at once), hence 65,536.

They are written into a hidden directory beside the tables (Spark and Hive skip
names that start with "."), then each is renamed into its partition: an interrupted
export leaves no half-written file where a reader looks. An export killed outright
(SIGKILL, the OOM killer) cannot remove its directory; the next export into the same
place removes every staging directory whose writer's lock (flock(2) on a file beside
it, taken before the directory is made) is free, as for the store's temporary files
(advisor/store/replace.py): a process id would mean nothing to a writer in another
PID namespace or on another host sharing the directory.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Callable

from advisor.errors import TraceIOError
from advisor.store import blk_views, parts, replace
from advisor.store.ddl import ident, literal

FILE = "data.parquet"
EXPORT_BATCH_ROWS = 65_536
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


_STAGING = ".writing-"
_LOCK = ".lock"


def _remove_abandoned(out_dir: Path) -> None:
    """Remove the staging directories (and lock files) of exports that were killed:
    those whose lock is free or gone."""
    for lock in out_dir.glob(f"{_STAGING}*{_LOCK}"):
        staging = lock.with_name(lock.name[: -len(_LOCK)])
        if replace.held(lock) is False:
            shutil.rmtree(staging, ignore_errors=True)
            lock.unlink(missing_ok=True)
    for staging in out_dir.glob(f"{_STAGING}*"):
        if staging.is_dir() and not staging.with_name(staging.name + _LOCK).exists():
            shutil.rmtree(staging, ignore_errors=True)


def export(con, out_dir: Path, capture: str, progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the store's tables under out_dir; returns {host, capture, tables: {name: rows}}."""
    host = host_of(con)
    capture = safe(capture)
    tables = tables_of(con)
    staging = out_dir / f"{_STAGING}{capture}-{os.getpid()}-{secrets.token_hex(4)}"
    lock_path = staging.with_name(staging.name + _LOCK)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        lock = replace.take_lock(lock_path)
        if lock is not None:  # with no locks here, nothing can be told dead
            _remove_abandoned(out_dir)
    except OSError as e:
        raise TraceIOError(f"{e.filename or out_dir}: {e.strerror}") from None
    writer = parts.Writer(staging, compression="zstd")
    try:
        writer.open()
        written = {}
        for i, name in enumerate(tables):
            written[name] = writer.write(name, con.sql(f"SELECT * FROM {ident(name)}").to_arrow_reader(EXPORT_BATCH_ROWS))
            if progress:
                progress(i + 1, len(tables))
        writer.close()
        for name in tables:
            part = out_dir / safe(name) / f"host={host}" / f"capture={capture}"
            if part.exists():
                shutil.rmtree(part)
            part.mkdir(parents=True)
            if name in writer.paths:
                os.replace(writer.paths[name], part / FILE)
            else:
                # The writer makes no file for a table without rows; DuckDB writes
                # its columns with none.
                con.execute(f"COPY (SELECT * FROM {ident(name)} LIMIT 0) TO {literal(str(part / FILE))} (FORMAT parquet)")
    except OSError as e:
        raise TraceIOError(f"{e.filename or out_dir}: {e.strerror}") from None
    except ValueError as e:
        raise TraceIOError(f"{out_dir}: {e}") from None
    finally:
        writer.abort()  # after close() it only removes the staging directory, emptied by the renames
        lock_path.unlink(missing_ok=True)
        if lock is not None:
            os.close(lock)
    return {"host": host, "capture": capture, "directory": str(out_dir), "tables": written}
