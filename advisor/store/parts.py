"""The store's big tables, as Parquet files written while the parsers run.

A store is a DuckDB file (the catalog: the capture's facts, small tables and
every view) and, beside it, a directory with one Parquet file per table that
has rows:

    incident.duckdb
    incident.duckdb.<token>.parts/writeback_dirty_folio.parquet ...

The catalog's `raw.<table>` is a view over `read_parquet('<that file>')`.
Writing Parquet from the parsers' Arrow batches costs a fraction of inserting
them into DuckDB's own tables and compressing those at commit (on a 1.68 M-event
capture: 0.29 s and 4.0 MB against 0.6-1.0 s and 15.7 MB; benchmarks/README.md),
and DuckDB reads the files back as fast as its own tables for the advisor's
queries (the same analyze and replay times, the same output).

Encodings: timestamps, ids, inode numbers and sectors are close to their
neighbours, so integers are delta-encoded (DELTA_BINARY_PACKED: 14 bits a
timestamp where a dictionary would keep 64); names and other text keep
dictionary encoding; pages are compressed with zstd.
https://parquet.apache.org/docs/file-format/data-pages/encodings/

Each ingest writes a directory of its own (the token is the temporary store's),
so a store being replaced keeps reading its old files until the new catalog is
renamed over it, and an interrupted ingest leaves nothing the catalog names.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow._parquet as pq_core

from advisor.store.ddl import literal

SUFFIX = ".parts"
COMPRESSION = "zstd"
#: Integer columns with few distinct values compress best as dictionaries
#: (cpu, flags, preempt_count, a writeback reason); these are always small.
_DICTIONARY_INTS = frozenset({"cpu", "flags", "preempt_count", "common_flags", "common_preempt_count", "common_cpu"})


def directory(store: Path, token: str) -> Path:
    return store.with_name(f"{store.name}.{token}{SUFFIX}")


def directories(store: Path) -> list[Path]:
    """Every parts directory written for `store` (current, stale or being written)."""
    return sorted(p for p in store.parent.glob(f"{glob_escape(store.name)}.*{SUFFIX}") if p.is_dir())


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def token_of(store: Path, parts: Path) -> str:
    return parts.name[len(store.name) + 1 : -len(SUFFIX)]


def file_name(table: str) -> str:
    """A file name for any table name (text captures name tables after what
    the lines say): hex-escape what is not safe in a path component."""
    safe = "".join(c if c.isalnum() or c in "_-" else f"%{ord(c):02x}" for c in table)
    return f"{safe}.parquet"


#: The Arrow allocator the Parquet encoders use: pyarrow's default (mimalloc in
#: its Linux wheels) kept ~45 MiB more resident than the system allocator while
#: ingesting an 8.5 M-event capture (peak RSS 302 against 257 MiB), at the same
#: speed. The command line makes it every Arrow allocation's (advisor/cli/__init__.py).
@functools.cache
def _pool():
    import pyarrow as pa  # noqa: PLC0415 - only when writing: a cached store's queries never load it

    return pa.system_memory_pool()


def _options(schema: pa.Schema) -> dict:
    import pyarrow as pa  # noqa: PLC0415

    delta = [
        f.name
        for f in schema
        if pa.types.is_integer(f.type) and f.name not in _DICTIONARY_INTS
    ]
    return {
        # pyarrow.parquet.ParquetWriter's defaults, said here because the writer is
        # its core class (see `open_file`).
        "version": "2.6",
        "writer_engine_version": "V2",
        "data_page_version": "1.0",
        "use_compliant_nested_type": True,
        "store_schema": True,
        "compression": COMPRESSION,
        "use_dictionary": [f.name for f in schema if f.name not in delta],
        "column_encoding": {c: "DELTA_BINARY_PACKED" for c in delta} or None,
        "write_statistics": True,
        "memory_pool": _pool(),
    }


class PartFile(NamedTuple):
    """One table's Parquet file being written: the writer, the file under it (closed
    after the writer) and the schema of its first batch."""

    writer: pq_core.ParquetWriter
    sink: pa.NativeFile
    schema: pa.Schema

    def close(self) -> None:
        """The footer, then the file; the file is closed even when the footer fails."""
        try:
            self.writer.close()
        finally:
            self.sink.close()


def open_file(path: Path, schema: pa.Schema) -> PartFile:
    """A Parquet writer on a new local file.

    pyarrow.parquet.ParquetWriter is this core writer behind a filesystem layer:
    importing pyarrow.parquet loads pyarrow.fs, and with it the S3, GCS, Azure and
    HDFS filesystems (libarrow_s3, libcrypto, libssl: 7 MiB resident in every ingest,
    for local files only). The files come out byte for byte the same
    (tests/store/test_parts_writer.py)."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow._parquet as pq_core  # noqa: PLC0415

    sink = pa.OSFile(str(path), "wb")
    try:
        return PartFile(pq_core.ParquetWriter(sink, schema, **_options(schema)), sink, schema)
    except BaseException:
        sink.close()
        raise


class Writer:
    """One Parquet file per table, appended batch by batch (a row group per
    batch: the parsers hand over up to 262,144 rows at a time)."""

    def __init__(self, parts: Path):
        self.parts = parts
        self._files: dict[str, PartFile] = {}
        self.rows: dict[str, int] = {}
        self.paths: dict[str, Path] = {}

    def open(self) -> None:
        self.parts.mkdir()

    def write(self, table: str, reader) -> int:
        """Append every batch of one Arrow stream; the rows written."""
        import pyarrow as pa  # noqa: PLC0415

        n = 0
        for batch in pa.RecordBatchReader.from_stream(reader):
            if not batch.num_rows:
                continue
            f = self._files.get(table)
            if f is None:
                path = self.parts / file_name(table)
                f = self._files[table] = open_file(path, batch.schema)
                self.paths[table] = path
            elif batch.schema != f.schema:
                # A text capture's later batch of a table typed from its first lines.
                batch = batch.cast(f.schema)
            f.writer.write_table(pa.Table.from_batches([batch]))  # one row group
            n += batch.num_rows
        self.rows[table] = self.rows.get(table, 0) + n
        return n

    def close(self) -> None:
        """Finish every file (its footer) and make it durable before the
        catalog that names it is renamed into place."""
        files, self._files = self._files, {}
        for f in files.values():
            f.close()
        for path in self.paths.values():
            _fsync(path)
        if self.parts.exists():
            _fsync(self.parts)  # the directory: its entries for the new files

    def abort(self) -> None:
        for f in self._files.values():
            try:
                f.close()
            except Exception:  # noqa: BLE001 - a full disk fails the footer too
                pass
        self._files = {}
        shutil.rmtree(self.parts, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def view_sql(qualified: str, path: Path) -> str:
    return f"CREATE VIEW {qualified} AS SELECT * FROM read_parquet({literal(str(path.resolve()))});"


_READ_PARQUET = re.compile(r"read_parquet\('((?:[^']|'')*)/[^/']*'\)")


def read_by(con) -> Path | None:
    """The parts directory a store's views read (None: every table is inside the
    DuckDB file). A view names its file by absolute path, quoted as a literal."""
    row = con.execute("SELECT sql FROM duckdb_views() WHERE sql LIKE '%read_parquet(%' LIMIT 1").fetchone()
    m = _READ_PARQUET.search(row[0]) if row else None
    return Path(m.group(1).replace("''", "'")) if m else None


def remove(parts: Path) -> int:
    """Delete a parts directory; the bytes freed."""
    freed = size(parts)
    shutil.rmtree(parts, ignore_errors=True)
    return freed


def size(parts: Path) -> int:
    total = 0
    try:
        for p in parts.iterdir():
            try:
                total += p.stat().st_size
            except FileNotFoundError:
                pass
    except (FileNotFoundError, NotADirectoryError):
        pass
    return total
