"""The store's big tables, as Parquet files written while the parsers run.

A store is a DuckDB file (the catalog: the capture's facts, small tables and
every view) and, beside it, a directory with one Parquet file per table that
has rows:

    incident.duckdb
    incident.duckdb.<token>.parts/raw%2ewriteback_dirty_folio.parquet ...

The catalog's `raw.<table>` is a view over `read_parquet('<that file>')`.
The parsers' batches go into the files without leaving Rust (the `parquet`
crate: parsers/src/parts.rs has the encodings), a row group per batch, so
ingest needs neither pyarrow nor a copy of the rows. Writing Parquet costs a
fraction of inserting the rows into DuckDB's own tables and compressing those
at commit, and DuckDB reads the files back as fast as its own tables for the
advisor's queries (benchmarks/README.md).

Each ingest writes a directory of its own (the token is the temporary store's),
so a store being replaced keeps reading its old files until the new catalog is
renamed over it, and an interrupted ingest leaves nothing the catalog names.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from advisor import _parsers
from advisor.store.ddl import literal

SUFFIX = ".parts"


def directory(store: Path, token: str) -> Path:
    return store.with_name(f"{store.name}.{token}{SUFFIX}")


def directories(store: Path) -> list[Path]:
    """Every parts directory written for `store` (current, stale or being written)."""
    return sorted(p for p in store.parent.glob(f"{glob_escape(store.name)}.*{SUFFIX}") if p.is_dir())


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def token_of(store: Path, parts: Path) -> str:
    return parts.name[len(store.name) + 1 : -len(SUFFIX)]


class Writer:
    """One Parquet file per table, appended batch by batch (a row group per
    batch: the parsers hand over up to 262,144 rows at a time), encoded on
    `threads` threads of its own, each table on one of them.

    `compression`: "lz4" for the store's own files, which only DuckDB reads (the
    cheaper to write: 2.9-3.1 against 3.2-3.35 s of CPU to ingest 9.44 M events,
    for files a fifth larger); "zstd" for Parquet other readers take (the fleet export)."""

    def __init__(self, parts: Path, threads: int = 1, compression: str = "lz4"):
        self.parts = parts
        self.threads = threads
        self.compression = compression
        self._files: _parsers.PartsWriter | None = None
        self.paths: dict[str, Path] = {}

    def open(self) -> None:
        self.parts.mkdir()
        self._files = _parsers.PartsWriter(str(self.parts), self.threads, self.compression)

    def write(self, table: str, reader) -> int:
        """Append every batch of one Arrow stream; the rows written."""
        return self._files.write(table, reader)

    def close(self) -> None:
        """Finish every file (its footer) and make it durable before the
        catalog that names it is renamed into place."""
        if self._files is None:
            return
        files, self._files = self._files, None
        files.close()
        self.paths = {table: Path(path) for table, path, _rows in files.written()}

    def abort(self) -> None:
        if self._files is not None:
            self._files.abort()
            self._files = None
        shutil.rmtree(self.parts, ignore_errors=True)


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
