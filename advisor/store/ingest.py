"""Build a store from the captures of one incident.

A store holds at most one ftrace capture (a trace.dat or text) and any
number of blktrace device sets, so one session can query both layers. Each
parser runs on its own thread and hands over record batches (Arrow PyCapsule
streams); each is read once into its DuckDB table. ftrace event tables hold
what was decoded (schema `raw`); the user-facing tables of the data contract
are views in the main schema that add the task name and thread group from
`tasks` (see views.py). The big blktrace tables are stored lean in `raw` too,
with views that spell them the way blkparse prints them (blk_views.py).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import secrets
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa

from advisor import parsers
from advisor.errors import TraceFormatError, TraceIOError, UsageError
from advisor.store import blk_views, clocks, macros, views
from advisor.store.ddl import create_table, ident
from advisor.store.interrupts import interruptible

#: Bump when the layout of the store changes (invalidates cached stores).
STORE_VERSION = 8

#: Rows per record batch, and the cap on decoded bytes the parser buffers
#: across event types: what bounds ingest memory, whatever the trace size.
BATCH_ROWS = 262_144
MAX_PENDING_BYTES = 64 << 20
#: DuckDB's buffer pool during ingest: written blocks beyond it are evicted.
DUCKDB_MEMORY_LIMIT = "256MB"

#: Tables the parsers emit besides ftrace event tables (in the main schema,
#: but for blk_views.RAW_TABLES, which are under raw).
SIDE_TABLES = {
    "tasks",
    "lost_events",
    "unknown_events",
    "blk_events",
    "blk_details",
    "io_requests",
    "io_phases",
    "blk_lost_events",
    "blk_tasks",
    "blk_devices",
}

Progress = Callable[[int, int], None]


@dataclass
class Inputs:
    """The captures of one store: one ftrace capture (trace.dat or text) and
    one blktrace source (binary device sets read together, or one blkparse text)."""

    ftrace: Path | None = None
    blktrace: list[Path] = field(default_factory=list)
    blkparse_text: Path | None = None

    @classmethod
    def classify(cls, paths: list[Path]) -> "Inputs":
        inputs = cls()
        for p in paths:
            p = Path(p)
            if str(p) != "-" and p.is_dir():
                raise TraceIOError(f"{p}: is a directory")
            if str(p) != "-" and not p.exists() and not parsers.is_blktrace(p):
                raise TraceIOError(f"{p}: no such file")
            kind = parsers.detect_format(p)
            if kind == "blktrace":
                inputs.blktrace.append(p)
            elif kind == "blkparse-text":
                if inputs.blkparse_text is not None:
                    raise UsageError(f"one store holds one blktrace source (got {inputs.blkparse_text} and {p})")
                inputs.blkparse_text = p
            else:
                if inputs.ftrace is not None:
                    raise UsageError(
                        f"one store holds one ftrace capture (got {inputs.ftrace} and {p}); ingest them separately"
                    )
                inputs.ftrace = p
        if inputs.blkparse_text and inputs.blktrace:
            raise UsageError("one store holds one blktrace source: binary files or a blkparse text, not both")
        if Path("-") in inputs.blktrace and len(inputs.blktrace) > 1:
            raise UsageError("blktrace data on stdin must be ingested on its own")
        return inputs

    @property
    def paths(self) -> list[Path]:
        return (
            ([self.ftrace] if self.ftrace else [])
            + self.blktrace
            + ([self.blkparse_text] if self.blkparse_text else [])
        )

    @property
    def from_stdin(self) -> bool:
        return Path("-") in self.blktrace

    def files(self) -> list[Path]:
        """Every file read, per-CPU blktrace files included."""
        out = [p for p in (self.ftrace, self.blkparse_text) if p]
        for b in self.blktrace:
            out.extend(parsers.blktrace_files(b))
        return out

    def digest(self) -> str:
        """Content hash of all the inputs (the cache key)."""
        if self.from_stdin:
            raise UsageError("data on stdin has no content hash to cache by: give -o STORE")
        parts = [f"{f.name}:{parsers.file_digest(f)}" for f in self.files()]
        return parsers.text_digest("\n".join(parts)) if len(parts) != 1 else parts[0].split(":", 1)[1]


@dataclass
class IngestResult:
    traces: list[Path]
    store: Path
    digest: str
    cached: bool
    seconds: float
    info: dict[str, str]
    events_by_type: dict[str, int]
    stats: list[tuple] = field(default_factory=list)
    damaged: bool = False
    damage: list[str] = field(default_factory=list)
    blk_actions: dict[str, int] = field(default_factory=dict)

    @property
    def trace(self) -> Path:
        return self.traces[0]

    @property
    def events(self) -> int:
        return sum(self.events_by_type.values())

    @property
    def blk_events(self) -> int:
        return sum(self.blk_actions.values())

    def stat_total(self, name: str) -> int:
        return sum(s[3] for s in self.stats if s[0] == name)

    @property
    def lost_events(self) -> int:
        """Events the kernel reported dropping (ftrace counts it stored, blktrace sequence gaps)."""
        return sum(s[3] for s in self.stats if s[0] == "lost_events" or s[0].startswith("blk_lost_events"))

    @property
    def data_loss(self) -> list[tuple]:
        return [s for s in self.stats if s[2] == "data_loss" and s[3] > 0]


def _schema(reader) -> pa.Schema:
    return pa.schema(reader)


def ingest(
    paths: list[Path],
    store: Path,
    digest: str | None = None,
    progress: Progress | None = None,
    checksum: Path | None = None,
) -> IngestResult:
    """Parse the captures of one incident into a new DuckDB database at `store`.

    The database is written under a temporary name and renamed into place
    only when complete, so an interrupted ingest never leaves a store that
    looks finished. `checksum`: a file to write the finished store's BLAKE3
    to (the cache checks it before reusing a store).
    """
    started = time.perf_counter()
    inputs = Inputs.classify([Path(p) for p in paths])
    digest = digest or ("stdin" if inputs.from_stdin else inputs.digest())
    sources = []
    if inputs.ftrace:
        sources.append(parsers.open_trace(inputs.ftrace))
    if inputs.blktrace:
        sources.append(parsers.open_blktrace(inputs.blktrace))
    if inputs.blkparse_text:
        sources.append(parsers.open_trace(inputs.blkparse_text))
    check_target(store)
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreWriteError(f"{e.filename or store.parent}: cannot create the directory: {e.strerror}") from None
    with temporary(store) as tmp:
        con = None
        try:
            # Inside the try: Ctrl-C can land just after the file is created.
            con = duckdb.connect(str(tmp), config={"memory_limit": DUCKDB_MEMORY_LIMIT})
            with interruptible(con):
                # One transaction: a commit per statement would sync the WAL each time.
                con.execute("BEGIN TRANSACTION")
                result = _load(con, sources, inputs, digest, progress)
                con.execute("COMMIT")
            con.close()
            con = None
            if checksum is not None:
                _write_checksum(checksum, parsers.file_digest(tmp))
            check_target(store)  # it may have appeared while parsing
            os.replace(tmp, store)
        except BaseException as e:
            # Ctrl-C or kill (SIGTERM is unwound the same way, cli/signals.py) may
            # land inside DuckDB: closing can fail then, the removal must not.
            try:
                if con is not None:
                    con.close()
            except Exception:  # noqa: BLE001
                pass
            # DuckDB turns a Ctrl-C during a query into "Query interrupted".
            if isinstance(e, (RuntimeError, duckdb.Error)) and "interrupted" in str(e).lower():
                raise KeyboardInterrupt from None
            fault = _write_fault(e)
            if fault:
                raise StoreWriteError(f"{store}: cannot write the store: {fault}") from None
            raise
    result.store = store
    result.seconds = time.perf_counter() - started
    return result


def _write_checksum(path: Path, digest: str) -> None:
    # Not "*.tmp": that is a temporary store to the clean-up of dead ones.
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    try:
        tmp.write_text(digest + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class StoreWriteError(TraceIOError):
    """The store could not be written (full disk, read-only file system, permissions)."""


def _write_fault(e: BaseException) -> str | None:
    """Why writing failed, when the machine is the cause: one line."""
    if isinstance(e, OSError):
        return e.strerror or str(e)
    if isinstance(e, duckdb.Error):
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        # A full disk surfaces as an IO error, or at COMMIT as a failed transaction.
        if isinstance(e, (duckdb.IOException, duckdb.PermissionException, duckdb.OutOfMemoryException)) or any(
            why in text for why in ("No space left", "Read-only file system", "Permission denied", "Disk quota")
        ):
            return text
    return None


def check_target(store: Path) -> None:
    """A store replaces only a regular file: `-o /dev/null`, `-o DIR` or
    `-o /dev/stdout` (a link) must not turn a device, a directory or a link
    into a database: the store is renamed into place."""
    try:
        st = store.lstat()
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreWriteError(f"{store}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        what = {stat.S_IFDIR: "a directory", stat.S_IFLNK: "a symbolic link"}.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise StoreWriteError(f"{store}: is {what}; a store is written only to a new or regular file")


@contextlib.contextmanager
def temporary(store: Path):
    """The temporary name a store is written under (beside it, renamed into
    place when complete), held by an exclusive lock on a file next to it.

    The lock, not the writer's process id, tells a live temporary store from
    one whose writer was killed (SIGKILL, power loss): a process id means
    nothing to an ingest in another PID namespace (a container) or on another
    host sharing the cache over NFS, where flock is carried by the server.
    https://man7.org/linux/man-pages/man2/flock.2.html
    """
    tmp = store.with_name(f".{store.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    lock_path = Path(str(tmp) + ".lock")
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise StoreWriteError(f"{store}: cannot write the store: {e.strerror}") from None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            locked = True
        except OSError:
            locked = False  # no locks on this file system (NFS without lockd): nothing is removed
        if locked:
            _remove_dead_temps(store)
        yield tmp
    finally:
        for p in (tmp, Path(str(tmp) + ".wal"), lock_path):
            try:
                p.unlink(missing_ok=True)
            except OSError:
                pass
        os.close(lock)


def _remove_dead_temps(store: Path) -> None:
    """Temporary stores whose writer is gone (killed: no chance to clean up).
    A writer holds its lock file from before the temporary store exists until
    after it is renamed or removed, so a temporary store whose lock can be
    taken, or that has no lock file, is dead."""
    for tmp in store.parent.glob(f".{store.name}.*.tmp"):
        lock_path = Path(str(tmp) + ".lock")
        try:
            lock = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            lock = None
        except OSError:
            continue
        try:
            if lock is not None:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live ingest
            for p in (tmp, Path(str(tmp) + ".wal"), lock_path):
                try:
                    p.unlink(missing_ok=True)
                except OSError:
                    pass
        finally:
            if lock is not None:
                os.close(lock)


def ingest_trace(trace: Path, store: Path, digest: str | None = None, progress: Progress | None = None) -> IngestResult:
    """One capture into a store (see `ingest`)."""
    return ingest([trace], store, digest, progress)


@dataclass
class _Loaded:
    """What has been created while loading the sources."""

    schemas: dict[str, pa.Schema] = field(default_factory=dict)  # raw event tables
    rows: dict[str, int] = field(default_factory=dict)
    side: dict[str, pa.Schema] = field(default_factory=dict)
    specs: list[dict] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    stats: list[tuple] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)
    damaged: bool = False


def _load(con, sources, inputs: Inputs, digest: str, progress: Progress | None) -> IngestResult:
    con.execute("CREATE SCHEMA raw;")
    state = _Loaded()
    total = max(sum(s.total_bytes for s in sources), 1)
    done_before = 0
    for src in sources:
        _load_source(con, src, state, lambda d, _t, base=done_before: progress and progress(base + d, total))
        done_before += src.total_bytes
    if progress:
        progress(total, total)
    if "tasks" not in state.side:
        con.execute("CREATE TABLE tasks (pid INTEGER, comm VARCHAR, tgid INTEGER);")
    state.info.update(_facts(inputs, digest, state))
    if "blk_events" in state.side:
        state.info.update(clocks.estimate(con, state.info.get("clock") if inputs.ftrace else None, state.info))
    _write_meta(con, state.info, state.stats, state.specs, state.rows)
    views.create(con, state.specs, state.schemas, state.rows)
    macros.create(con)
    if "blk_events" in state.side:
        blk_views.create(con, int(state.info.get("blktrace_clock_offset_applied_ns", "0")))
    blk_actions = {}
    if "blk_events" in state.side:
        blk_actions = {a: int(n) for a, n in con.execute(blk_views.ACTION_COUNTS).fetchall()}
    return IngestResult(
        traces=inputs.paths,
        store=Path(),
        digest=digest,
        cached=False,
        seconds=0.0,
        info=state.info,
        events_by_type={k: v for k, v in state.rows.items() if v},
        stats=state.stats,
        damaged=state.damaged,
        damage=state.damage,
        blk_actions=blk_actions,
    )


def _load_source(con, src, state: _Loaded, progress: Progress | None) -> None:
    specs = src.tables()
    new = {s["name"]: _schema(s["empty"]) for s in specs}
    # One statement for every table: per-statement overhead dominates small tables.
    ddl = "\n".join(create_table(f"raw.{ident(name)}", sch) for name, sch in new.items())
    if ddl:
        con.execute(ddl)
    state.specs.extend(specs)
    state.schemas.update(new)
    state.rows.update({name: 0 for name in new})
    # The format's other tables exist even when the capture gives them no rows.
    for name, empty in src.side_tables():
        if name not in state.side:
            sch = _schema(empty)
            con.execute(create_table(_side_target(name), sch))
            state.side[name] = sch
    # One DuckDB thread appends each batch straight into the table's row groups.
    # With a thread per core, each insert of a batch is split into partial row
    # groups that the commit compresses and merges again: on 2.4 M blktrace records
    # 0.8 s more CPU and a store of 70 MB instead of 44 MB; on 17 M ftrace events
    # 2.4 s more CPU and 92 MB instead of 58 MB (benchmarks/README.md). A failed
    # ingest drops the connection.
    con.execute("SET threads = 1")
    batches = src.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES)
    for name, reader in batches:
        if name in state.schemas:
            con.execute(f"INSERT INTO raw.{ident(name)} SELECT * FROM reader")
        elif name in state.side:
            con.execute(f"INSERT INTO {_side_target(name)} SELECT * FROM reader")
        else:
            # Side tables, and event tables of text captures (no formats up front).
            sch = _schema(reader)
            target = _side_target(name) if name in SIDE_TABLES else f"raw.{ident(name)}"
            con.execute(create_table(target, sch))
            con.execute(f"INSERT INTO {target} SELECT * FROM reader")
            if name in SIDE_TABLES:
                state.side[name] = sch
            else:
                state.schemas[name] = sch
                state.rows[name] = 0
        if name in state.rows:
            state.rows[name] += _last_insert_count(con)
        if progress:
            progress(batches.progress(), src.total_bytes)
    con.execute("RESET threads")
    report = batches.report() or {}
    # Every damage line names its file (blktrace lines name the per-CPU file).
    label = "stdin" if str(src.path) == "-" else src.path.name
    damage = [d if label in d else f"{src.path}: {d}" for d in report.get("damage", [])]
    if not report.get("events") and damage:
        # Nothing readable at all: an error, not an empty store.
        raise TraceFormatError(damage[0])
    if not report.get("events") and src.format == "blktrace":
        raise TraceFormatError(f"{label}: no blktrace records in this input (empty files or stream)")
    state.info.update(dict(src.info()))
    state.info.update(dict(report.get("info", [])))
    prefix = "blktrace_" if src.format == "blktrace" else ""
    first, last = report.get("first_ts"), report.get("last_ts")
    state.info[f"{prefix}events"] = str(report.get("events", 0))
    if first is not None and last is not None:
        state.info.update({f"{prefix}first_ts": str(first), f"{prefix}last_ts": str(last), f"{prefix}duration_ns": str(last - first)})
    state.stats.extend(tuple(s) for s in report.get("stats", []))
    state.damage.extend(damage)
    state.damaged |= bool(report.get("damaged"))


def _side_target(name: str) -> str:
    """Where a side table is stored: the lean blktrace tables under raw (the
    main schema has views of them), the others in main."""
    return f"raw.{ident(name)}" if name in blk_views.RAW_TABLES else ident(name)


def _last_insert_count(con) -> int:
    row = con.fetchone()
    return int(row[0]) if row else 0


def _facts(inputs: Inputs, digest: str, state: _Loaded) -> dict[str, str]:
    facts = {
        "parser_version": parsers.PARSER_VERSION,
        "store_version": str(STORE_VERSION),
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "partial": "true" if state.damaged else "false",
        # Where each input stopped being readable, one line each (file, offset, why).
        "damage": "\n".join(state.damage),
        "inputs_blake3": digest,
    }
    if inputs.ftrace:
        facts.update(
            source_file=str(inputs.ftrace),
            source_bytes=str(inputs.ftrace.stat().st_size),
            source_blake3=parsers.file_digest(inputs.ftrace),
        )
    if inputs.blktrace or inputs.blkparse_text:
        facts["blktrace_files"] = ",".join(str(p) for p in inputs.paths if p != inputs.ftrace)
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
