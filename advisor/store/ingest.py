"""Build a store from the captures of one incident.

A store holds at most one ftrace capture (a trace.dat or text) and any
number of blktrace device sets, so one session can query both layers. Each
parser runs on its own thread and hands over record batches (Arrow PyCapsule
streams); each is written once, to its table's Parquet file (store/parts.py)
or, for a single-file store, into a DuckDB table. ftrace event tables hold
what was decoded (schema `raw`); the user-facing tables of the data contract
are views in the main schema that add the task name and thread group from
`tasks` (see views.py). The big blktrace tables are stored lean in `raw` too,
with views that spell them the way blkparse prints them (blk_views.py).
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from advisor import parsers
from advisor.errors import TraceFormatError, TraceIOError, UsageError
from advisor.store import blk_views, clocks, macros, parts, sink, views
from advisor.store.allocator import return_freed_memory, trim_freed_memory
from advisor.store.connect import connect
from advisor.store.ddl import ident
from advisor.store.interrupts import interruptible
from advisor.store.replace import StoreWriteError, check_target, current_token, publish, temporary, write_checksum, write_fault
from advisor.store_settings import BATCH_ROWS, MAX_PENDING_BYTES, STORE_VERSION, reader_threads

if TYPE_CHECKING:
    from advisor.store.ddl import Columns

__all__ = ["STORE_VERSION", "Inputs", "IngestResult", "Progress", "StoreWriteError", "check_target", "ingest"]

#: DuckDB's buffer pool during ingest: written blocks beyond it are evicted.
DUCKDB_MEMORY_LIMIT = "256MB"

#: Tables the parsers emit besides ftrace event tables (in the main schema,
#: but for _RAW_SIDE_TABLES, which are under raw).
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
    "syscall_spans",
    "printk_strings",
    "kallsyms",
    "instance_events",
}
#: Side tables read only through views (advisor/views/spans.py), kept under raw.
_RAW_SIDE_TABLES = (*blk_views.RAW_TABLES, "syscall_spans")

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
            raise UsageError("data on stdin has no content hash to cache by: write a store first (advisor ingest - -o STORE), "
                             "then give the command that store, or read the stream with advisor io -")
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
        """Events the kernel reported dropping (ftrace counts it stored, blktrace sequence gaps;
        for text saved from tracefs, the header's entries written minus those still in the
        buffer, when that is more: "# entries-in-buffer/entries-written: 47726/907028")."""
        counted = sum(s[3] for s in self.stats if s[0] == "lost_events" or s[0].startswith("blk_lost_events"))
        return max(counted, self.stat_total("overwritten_entries"))

    @property
    def data_loss(self) -> list[tuple]:
        return [s for s in self.stats if s[2] == "data_loss" and s[3] > 0]

    @property
    def warnings(self) -> list[tuple]:
        """Read whole, but skewing counts (an event type recorded in two trace buffers)."""
        return [s for s in self.stats if s[2] == "warning" and s[3] > 0]


def ingest(
    paths: list[Path],
    store: Path,
    digest: str | None = None,
    progress: Progress | None = None,
    checksum: Path | None = None,
    single_file: bool = False,
) -> IngestResult:
    """Parse the captures of one incident into a new store at `store`: a
    DuckDB catalog and, beside it, the tables with rows as Parquet files
    (store/parts.py), or with `single_file` every table inside the DuckDB file.

    Everything is written under temporary names and the catalog renamed into
    place only when complete, so an interrupted ingest never leaves a store
    that looks finished. `checksum`: a file to write the finished store's
    BLAKE3 to (the cache checks it before reusing a store).
    """
    started = time.perf_counter()
    return_freed_memory()
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
        writer = None if single_file else parts.Writer(tmp.parts, reader_threads())
        try:
            # Inside the try: Ctrl-C can land just after the file is created.
            con = connect(tmp.catalog, config={"memory_limit": DUCKDB_MEMORY_LIMIT})
            if writer:
                writer.open()
            with interruptible(con):
                # One transaction: a commit per statement would sync the WAL each time.
                con.execute("BEGIN TRANSACTION")
                result = _load(con, sources, inputs, digest, progress, writer, tmp.token)
                con.execute("COMMIT")
            con.close()
            con = None
            if checksum is not None:
                write_checksum(checksum, store_digest(tmp.catalog, tmp.parts if writer else None), tmp.token if writer else None)
            # Rename into place; the store it replaced, if any, read other files: gone with it.
            publish(tmp, store, has_parts=writer is not None)
        except BaseException as e:
            # Ctrl-C or kill (SIGTERM is unwound the same way, cli/signals.py) may
            # land inside DuckDB: closing can fail then, the removal must not.
            try:
                if con is not None:
                    con.close()
            except Exception:  # noqa: BLE001
                pass
            # Interrupted inside publish, after the rename: the store in place reads them.
            if writer and current_token(store) != tmp.token:
                writer.abort()
            # DuckDB turns a Ctrl-C during a query into "Query interrupted".
            if isinstance(e, (RuntimeError, duckdb.Error)) and "interrupted" in str(e).lower():
                raise KeyboardInterrupt from None
            fault = write_fault(e)
            if fault:
                raise StoreWriteError(f"{store}: cannot write the store: {fault}") from None
            raise
    result.store = store
    result.seconds = time.perf_counter() - started
    return result


def store_digest(catalog: Path, parts_dir: Path | None) -> str:
    """BLAKE3 of a store: its catalog and every Parquet file it reads, so a
    byte changed in any of them shows before a query reads it."""
    if parts_dir is None:
        return parsers.file_digest(catalog)
    lines = [f"catalog:{parsers.file_digest(catalog)}"]
    lines += [f"{f.name}:{parsers.file_digest(f)}" for f in sorted(parts_dir.iterdir())]
    return parsers.text_digest("\n".join(lines))


def ingest_trace(trace: Path, store: Path, digest: str | None = None, progress: Progress | None = None) -> IngestResult:
    """One capture into a store (see `ingest`)."""
    return ingest([trace], store, digest, progress)


@dataclass
class _Loaded:
    """What has been created while loading the sources."""

    schemas: dict[str, Columns] = field(default_factory=dict)  # raw event tables
    rows: dict[str, int] = field(default_factory=dict)
    side: dict[str, Columns] = field(default_factory=dict)
    specs: list[dict] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    stats: list[tuple] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)
    damaged: bool = False


def _load(con, sources, inputs: Inputs, digest: str, progress: Progress | None, writer, token: str) -> IngestResult:
    con.execute("CREATE SCHEMA raw;")
    state = _Loaded()
    tables = sink.ParquetTables(con, writer) if writer else sink.DuckDBTables(con)
    total = max(sum(s.total_bytes for s in sources), 1)
    done_before = 0
    for src in sources:
        _load_source(tables, src, state, lambda d, _t, base=done_before: progress and progress(base + d, total))
        done_before += src.total_bytes
    trim_freed_memory()  # the parsers are done; DuckDB's catalog comes next
    if "tasks" not in state.side:
        tables.declare("main", "tasks", [("pid", "INTEGER"), ("comm", "VARCHAR"), ("tgid", "INTEGER")])
    if "printk_strings" not in state.side:  # text captures print the strings themselves
        tables.declare("main", "printk_strings", [("address", "UBIGINT"), ("text", "VARCHAR")])
    if "kallsyms" not in state.side:  # text captures print the symbols themselves
        tables.declare("main", "kallsyms", [("address", "UBIGINT"), ("type", "VARCHAR"), ("name", "VARCHAR"), ("module", "VARCHAR"),
                                            ("line", "UINTEGER"), ("next_address", "UBIGINT")])
    if "instance_events" not in state.side:
        tables.declare("main", "instance_events", [("id", "UBIGINT"), ("instance", "VARCHAR")])
    tables.finish()
    if progress:
        progress(total, total)
    state.info.update(_facts(inputs, digest, state))
    if writer:
        state.info["parts_token"] = token
    if "blk_events" in state.side:
        state.info.update(clocks.estimate(con, state.info.get("clock") if inputs.ftrace else None, state.info))
    _write_meta(con, state.info, state.stats, state.specs, state.rows)
    trim_freed_memory()  # the parameters DuckDB copied event_formats from
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


def _load_source(tables, src, state: _Loaded, progress: Progress | None) -> None:
    specs = src.tables()
    new = {s["name"]: parsers.duckdb_columns(s["empty"]) for s in specs}
    for name, sch in new.items():
        tables.declare("raw", name, sch, when_empty=False)  # views.create covers those without rows
    state.specs.extend(specs)
    state.schemas.update(new)
    state.rows.update({name: 0 for name in new})
    # The format's other tables exist even when the capture gives them no rows.
    for name, empty in src.side_tables():
        if name not in state.side:
            sch = parsers.duckdb_columns(empty)
            tables.declare(*_side_target(name), sch)
            state.side[name] = sch
    batches = src.batches(batch_rows=BATCH_ROWS, max_pending_bytes=MAX_PENDING_BYTES, threads=reader_threads())
    for name, reader in batches:
        if name in state.schemas:
            target = ("raw", name)
        elif name in state.side:
            target = _side_target(name)
        else:
            # Side tables, and event tables of text captures (no formats up front).
            sch = parsers.duckdb_columns(reader)
            target = _side_target(name) if name in SIDE_TABLES else ("raw", name)
            tables.declare(*target, sch)
            if name in SIDE_TABLES:
                state.side[name] = sch
            else:
                state.schemas[name] = sch
                state.rows[name] = 0
        rows = tables.append(*target, reader)
        if name in state.rows:
            state.rows[name] += rows
        if progress:
            progress(batches.progress(), src.total_bytes)
    report = batches.report() or {}
    # Every damage line names its file (blktrace lines name the per-CPU file).
    label = "stdin" if str(src.path) == "-" else src.path.name
    damage = [d if label in d else f"{src.path}: {d}" for d in report.get("damage", [])]
    if not report.get("events") and damage:
        # Nothing readable at all: an error, not an empty store.
        raise TraceFormatError(damage[0])
    if not report.get("events") and src.format == "blktrace":
        raise parsers.no_blktrace_records(label)
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


def _side_target(name: str) -> tuple[str, str]:
    """Where a side table is stored: the lean blktrace tables and the syscall spans
    under raw (the main schema has views of them), the others in main."""
    return ("raw" if name in _RAW_SIDE_TABLES else "main", name)


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


#: The capture's facts, the parse statistics and the event formats: small tables,
#: each made by DuckDB from one list parameter per column (pyarrow is not loaded
#: for them: an ingest has no other use for it). Lists, not rows of dicts: DuckDB
#: reads a dict {"key": ..., "value": ...} as a MAP.
_META = {
    "trace_info": (("key", "VARCHAR"), ("value", "VARCHAR")),
    "parse_stats": (
        ("name", "VARCHAR"),
        ("cpu", "INTEGER"),
        ("severity", "VARCHAR"),
        ("count", "UBIGINT"),
        ("description", "VARCHAR"),
    ),
    "event_formats": (
        ("system", "VARCHAR"),
        ("event", "VARCHAR"),
        ("event_id", "UINTEGER"),
        ("table_name", "VARCHAR"),
        ("events", "UBIGINT"),
        ("fields", 'STRUCT(name VARCHAR, type VARCHAR, "offset" UINTEGER, size UINTEGER, signed BOOLEAN)[]'),
        ("print_fmt", "VARCHAR"),
    ),
}
_FIELD_KEYS = ("name", "type", "offset", "size", "signed")


def _write_meta(con, info, stats, specs, rows) -> None:
    """trace_info, parse_stats and event_formats."""
    keys = sorted(info)
    values = {
        "trace_info": [keys, [info[k] for k in keys]],
        "parse_stats": [[s[i] for s in stats] for i in range(5)],
        "event_formats": [
            [s["system"] for s in specs],
            [s["event"] for s in specs],
            [s["event_id"] for s in specs],
            [s["name"] for s in specs],
            [rows.get(s["name"], 0) for s in specs],
            [[dict(zip(_FIELD_KEYS, f)) for f in s["fields"]] for s in specs],
            [s["print_fmt"] for s in specs],
        ],
    }
    for table, columns in _META.items():
        select = ", ".join(f"unnest(?::{sql_type}[]) AS {ident(name)}" for name, sql_type in columns)
        con.execute(f"CREATE TABLE {table} AS SELECT {select}", values[table])
