"""DuckDB connections that a Ctrl-C or `kill` must stop mid-query.

Python runs a signal handler only when the main thread is back in the
interpreter. A query runs in DuckDB's C++ with the main thread inside it: the
Python client looks for a pending signal only between the tasks of a query,
and one task can last minutes (`select count(*) from events a, events b,
events c` on a 3,000-event capture: one nested-loop join task, more than 60 s
without a look). `DuckDBPyConnection.interrupt()` stops the query at once,
but it has to be called from another thread, which `advisor.cli.signals`
does for every connection registered here while it is in use."""

from __future__ import annotations

import contextlib
import threading

import duckdb

_lock = threading.Lock()
#: id(connection) -> connection, while a command runs queries on it.
_running: dict[int, duckdb.DuckDBPyConnection] = {}


@contextlib.contextmanager
def interruptible(con: duckdb.DuckDBPyConnection):
    """Queries on `con` in this block are stopped by SIGINT or SIGTERM.
    Leave the block before closing `con`: an interrupt never meets a
    connection being closed."""
    with _lock:
        _running[id(con)] = con
    try:
        yield con
    finally:
        with _lock:
            _running.pop(id(con), None)


def interrupt_all() -> int:
    """Interrupt the query running on each registered connection (nothing
    happens to one that is between queries). Returns how many were asked."""
    with _lock:
        for con in _running.values():
            try:
                con.interrupt()
            except duckdb.Error:
                pass  # closed under us: nothing runs on it
        return len(_running)
