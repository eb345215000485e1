"""Readers of a store hold its parts directory, so that no writer removes it under them.

Two commands on one new capture (two `advisor analyze` started together) both ingest it;
the second to finish renames its catalog over the first's and removes the first's parts
directory, which the first is still querying: "IO Error: No files found that match the
pattern .../main%2ekallsyms.parquet". A reader takes a shared flock(2) on the directory it
reads for as long as its connection lives; a writer removes a directory only when it can
take the lock exclusively, and holds it while it removes.
https://man7.org/linux/man-pages/man2/flock.2.html
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import weakref
from pathlib import Path

import duckdb

from advisor.store import parts
from advisor.store.connect import connect

# A writer that removed the directory between the reader's connect and its lock: the
# catalog now in place is the writer's own; connect again.
_ATTEMPTS = 5


def connect_held(store: Path, **kwargs) -> duckdb.DuckDBPyConnection:
    """duckdb.connect(store, **kwargs), with a shared lock on the parts directory its
    views read, released when the connection is freed."""
    for _ in range(_ATTEMPTS - 1):
        con = connect(store, **kwargs)
        if _hold(con):
            return con
        con.close()
    return connect(store, **kwargs)  # the last try's errors come with the first query


def _hold(con) -> bool:
    """False when the directory the views read was removed before the lock was taken."""
    try:
        directory = parts.read_by(con)
    except duckdb.Error:
        return True  # not a store this tool wrote: its own errors come with the first query
    if directory is None:
        return True  # every table inside the DuckDB file
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not readable: the queries say why
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        pass  # no locks on this file system: as before
    if os.fstat(fd).st_nlink == 0:  # removed while we waited for the lock
        os.close(fd)
        return False
    weakref.finalize(con, os.close, fd)
    return True


@contextlib.contextmanager
def unread(directory: Path):
    """Yields whether no reader holds `directory`; while the block runs, none can start."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield True  # gone, or not ours to open: nothing reads it through a lock
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            free = True
        except BlockingIOError:
            free = False
        except OSError:
            free = True  # no locks on this file system: as before
        yield free
    finally:
        os.close(fd)
