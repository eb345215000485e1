"""A store opened for queries the user types (`advisor sql`): DuckDB's
sandbox settings, so that a query reads the store and nothing else.

Without them one query could read any file (`read_text('/etc/shadow')`),
list directories (`glob('/etc/*')`), write files (`COPY ... TO`,
`EXPORT DATABASE`), install extensions from the network (`INSTALL httpfs`),
or attach another cached store writable and change what later verdicts read
(`ATTACH '<cached store>' (READ_WRITE)`, then `UPDATE trace_info ...`).
DuckDB's settings: https://duckdb.org/docs/stable/operations_manual/securing_duckdb/overview
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from advisor.errors import TraceIOError, UsageError
from advisor.store import parts, readers

#: Set when the database starts: extensions are neither installed nor loaded
#: behind a query's back, and nothing is kept outside the store.
START = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
}


def open_sandboxed(store: Path, writable: list[str] = (), memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to `store` with file, network and extension
    access off. `writable`: the files (or directories, named with a trailing
    '/' or existing, for `EXPORT DATABASE`) queries may write and read, named
    by the user. `memory_limit`: DuckDB's (e.g. "2GB"); what a query holds
    beyond it spills to DuckDB's temporary directory, `STORE.tmp` (the
    sandbox still lets DuckDB write its own spill files there). Call `lock()`
    once the connection's own temporary views exist."""
    try:
        con = readers.connect_held(store, read_only=True, config=START)
    except duckdb.Error as e:
        raise TraceIOError(f"{store}: cannot open store: {str(e).splitlines()[0]}") from None
    if memory_limit is not None:
        try:
            con.execute("SET memory_limit = ?", [memory_limit])
        except duckdb.Error as e:
            con.close()
            raise UsageError(f"--memory-limit {memory_limit!r}: {str(e).splitlines()[0]}") from None
    # DuckDB takes the allow-lists only on a running database, and only
    # before external access is switched off.
    files, dirs = [], []
    for name in writable:
        p = Path(name)
        if name.endswith("/") or p.is_dir():
            dirs.extend({str(p.resolve()) + "/", name.rstrip("/") + "/"})
        else:
            files.extend({name, str(p.resolve())})
    # The store's own table files (store/parts.py): readable by the store's views.
    # Writable too, as allow-lists go; a query that changes one is caught by the
    # cache's checksum before the store is used again.
    try:
        read = parts.read_by(con)
    except duckdb.Error:
        read = None  # not a store this tool wrote: its own errors come with the first query
    if read:
        dirs.append(str(read) + "/")
    con.execute("SET allowed_paths = ?", [files])
    con.execute("SET allowed_directories = ?", [dirs])
    con.execute("SET enable_external_access = false")
    return con


def lock(con) -> None:
    """No `SET` from here on: a query cannot turn the sandbox off."""
    con.execute("SET lock_configuration = true")
