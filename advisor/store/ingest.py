"""Build a store from one trace file.

The parser runs on its own thread and hands over record batches (Arrow
PyCapsule streams); each is read once into its DuckDB table. Event tables
hold what was decoded (schema `raw`); the user-facing tables of the data
contract are views in the main schema that add the task name and thread
group from `tasks` (see views.py).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa

from advisor import parsers
from advisor.errors import AdvisorError, TraceIOError
from advisor.store import macros, views
from advisor.store.ddl import create_table, ident

#: Bump when the layout of the store changes (invalidates cached stores).
STORE_VERSION = 2

#: Rows per record batch, and the cap on decoded bytes the parser buffers
#: across event types: what bounds ingest memory, whatever the trace size.
BATCH_ROWS = 262_144
MAX_PENDING_BYTES = 64 << 20
#: DuckDB's buffer pool during ingest: written blocks beyond it are evicted.
DUCKDB_MEMORY_LIMIT = "256MB"

#: Tables the parser emits besides event tables (created in the main schema).
SIDE_TABLES = {"tasks", "lost_events", "unknown_events"}

Progress = Callable[[int, int], None]


@dataclass
class IngestResult:
    trace: Path
    store: Path
    digest: str
    cached: bool
    seconds: float
    info: dict[str, str]
    events_by_type: dict[str, int]
    stats: list[tuple] = field(default_factory=list)
    damaged: bool = False
    damage: list[str] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(self.events_by_type.values())

    def stat_total(self, name: str) -> int:
        return sum(s[3] for s in self.stats if s[0] == name)

    @property
    def lost_events(self) -> int:
        """Events the kernel reported dropping (sum of the counts it stored)."""
        return self.stat_total("lost_events")

    @property
    def data_loss(self) -> list[tuple]:
        return [s for s in self.stats if s[2] == "data_loss" and s[3] > 0]


def _schema(reader) -> pa.Schema:
    return pa.schema(reader)


def ingest_trace(trace: Path, store: Path, digest: str | None = None, progress: Progress | None = None) -> IngestResult:
    """Parse `trace` into a new DuckDB database at `store`.

    The database is written under a temporary name and renamed into place
    only when complete, so an interrupted ingest never leaves a store that
    looks finished.
    """
    started = time.perf_counter()
    trace = Path(trace)
    digest = digest or parsers.file_digest(trace)
    src = parsers.open_trace(trace)
    tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
    for p in (tmp, Path(str(tmp) + ".wal")):
        p.unlink(missing_ok=True)
    store.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(tmp), config={"memory_limit": DUCKDB_MEMORY_LIMIT})
    try:
        # One transaction: a commit per statement would sync the WAL each time.
        con.execute("BEGIN TRANSACTION")
        result = _load(con, src, trace, digest, progress)
        con.execute("COMMIT")
        con.close()
        os.replace(tmp, store)
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
        raise
    result.store = store
    result.seconds = time.perf_counter() - started
    return result


def _load(con, src, trace: Path, digest: str, progress: Progress | None) -> IngestResult:
    specs = src.tables()
    schemas = {s["name"]: _schema(s["empty"]) for s in specs}
    con.execute("CREATE SCHEMA raw;")
    # One statement for every table: per-statement overhead dominates small tables.
    ddl = "\n".join(create_table(f"raw.{ident(name)}", sch) for name, sch in schemas.items())
    if ddl:
        con.execute(ddl)
    rows: dict[str, int] = {name: 0 for name in schemas}
    side: dict[str, pa.Schema] = {}
    total = max(src.total_bytes, 1)
    batches = src.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES)
    for name, reader in batches:
        if name in schemas:
            con.execute(f"INSERT INTO raw.{ident(name)} SELECT * FROM reader")
        elif name in side:
            con.execute(f"INSERT INTO {ident(name)} SELECT * FROM reader")
        else:
            # Side tables, and event tables of text captures (no formats up front).
            sch = _schema(reader)
            target = ident(name) if name in SIDE_TABLES else f"raw.{ident(name)}"
            con.execute(create_table(target, sch))
            con.execute(f"INSERT INTO {target} SELECT * FROM reader")
            if name in SIDE_TABLES:
                side[name] = sch
            else:
                schemas[name] = sch
                rows[name] = 0
        if name in rows:
            rows[name] += _last_insert_count(con)
        if progress:
            progress(batches.progress(), total)
    report = batches.report() or {}
    if progress:
        progress(total, total)
    if "tasks" not in side:
        con.execute("CREATE TABLE tasks (pid INTEGER, comm VARCHAR, tgid INTEGER);")
    info = dict(src.info())
    info.update(_facts(trace, digest, report))
    stats = [tuple(s) for s in report.get("stats", [])]
    _write_meta(con, info, stats, specs, rows)
    views.create(con, specs, schemas, rows)
    macros.create(con)
    return IngestResult(
        trace=trace,
        store=Path(),
        digest=digest,
        cached=False,
        seconds=0.0,
        info=info,
        events_by_type={k: v for k, v in rows.items() if v},
        stats=stats,
        damaged=bool(report.get("damaged")),
        damage=list(report.get("damage", [])),
    )


def _last_insert_count(con) -> int:
    row = con.fetchone()
    return int(row[0]) if row else 0


def _facts(trace: Path, digest: str, report: dict) -> dict[str, str]:
    first, last = report.get("first_ts"), report.get("last_ts")
    facts = {
        "source_file": str(trace),
        "source_bytes": str(trace.stat().st_size),
        "source_blake3": digest,
        "parser_version": parsers.PARSER_VERSION,
        "store_version": str(STORE_VERSION),
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "events": str(report.get("events", 0)),
        "partial": "true" if report.get("damaged") else "false",
    }
    if first is not None and last is not None:
        facts.update(first_ts=str(first), last_ts=str(last), duration_ns=str(last - first))
    return facts


_FIELD_STRUCT = pa.struct(
    [("name", pa.string()), ("type", pa.string()), ("offset", pa.uint32()), ("size", pa.uint32()), ("signed", pa.bool_())]
)


def _write_meta(con, info, stats, specs, rows) -> None:
    """trace_info, parse_stats and event_formats, each loaded from one Arrow table."""
    trace_info = pa.table({"key": sorted(info), "value": [info[k] for k in sorted(info)]})
    parse_stats = pa.table(
        {
            "name": pa.array([s[0] for s in stats], pa.string()),
            "cpu": pa.array([s[1] for s in stats], pa.int32()),
            "severity": pa.array([s[2] for s in stats], pa.string()),
            "count": pa.array([s[3] for s in stats], pa.uint64()),
            "description": pa.array([s[4] for s in stats], pa.string()),
        }
    )
    event_formats = pa.table(
        {
            "system": pa.array([s["system"] for s in specs], pa.string()),
            "event": pa.array([s["event"] for s in specs], pa.string()),
            "event_id": pa.array([s["event_id"] for s in specs], pa.uint32()),
            "table_name": pa.array([s["name"] for s in specs], pa.string()),
            "events": pa.array([rows.get(s["name"], 0) for s in specs], pa.uint64()),
            "fields": pa.array(
                [[dict(zip(_FIELD_STRUCT.names, f)) for f in s["fields"]] for s in specs], pa.list_(_FIELD_STRUCT)
            ),
            "print_fmt": pa.array([s["print_fmt"] for s in specs], pa.string()),
        }
    )
    con.execute(
        "CREATE TABLE trace_info AS SELECT * FROM trace_info;"
        "CREATE TABLE parse_stats AS SELECT * FROM parse_stats;"
        "CREATE TABLE event_formats AS SELECT * FROM event_formats;"
    )


def check_writable(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TraceIOError(f"{path.parent}: cannot create directory: {e.strerror}") from None
    if path.exists() and path.is_dir():
        raise AdvisorError(f"{path}: is a directory")
