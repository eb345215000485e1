"""SIGINT and SIGTERM while a command runs: unwound as KeyboardInterrupt so
that clean-up runs (an ingest removes its temporary store), and remembered,
so that the exit code is 128 + the signal's number whatever exception the
interrupt becomes on its way out (DuckDB's "Query interrupted", an error
raised while cleaning up).

The Python handler runs only once the main thread is back in the
interpreter; while that thread is inside a DuckDB query it may not be for
minutes. So the signal also wakes a thread (through the interpreter's wakeup
file descriptor, which its C-level handler writes the signal's number to at
once) that interrupts the queries running on the registered connections
(advisor.store.interrupts): DuckDB returns, and the handler runs."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from advisor.cli.entry import leave_while_loading

#: The signal that is ending the command, if any.
received: int | None = None

_CAUGHT = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`)."""


#: Signals the Python handler has run for (main thread), and signals the
#: watcher thread has seen arrive: while the first lags, a query still runs.
_handled_count = 0
_seen_count = 0
#: How often, and for how long, the watcher asks again: long enough for any
#: query to get from planning to execution; short, because two signals the
#: handler ran for once (both arrived before it ran) leave the counts apart
#: and the SQL shell's next query must not be interrupted for long.
_AGAIN_S, _GIVE_UP_S = 0.05, 3.0


def _record(signum: int) -> None:
    global received, _handled_count
    received = signum
    _handled_count += 1


def on_signal(signum, frame) -> None:
    _record(signum)
    if _importing(frame):
        # A KeyboardInterrupt raised inside a module's import (the commands load
        # DuckDB, pyarrow and matplotlib when they need them) cuts it in half: DuckDB's
        # C++ module set-up, calling back into enum.py, ended the process in
        # SIGABRT (exit -6), and other ingests interrupted 0.25-0.3 s after their
        # start (2 of 100) ran to their end and exited 0. Leave now, as during
        # start-up: a temporary store left behind is removed by the next ingest
        # (its lock died with this process), and nothing is renamed into place.
        leave_while_loading(signum, frame)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _importing(frame) -> bool:
    """Whether the main thread is inside an import (Python's import machinery is on its stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


class Deferred:
    """The signal that arrived inside `deferred()`, if any."""

    signum: int | None = None


@contextlib.contextmanager
def deferred():
    """Inside the block a signal interrupts the running query (the watcher thread
    does that) but raises nothing: the block ends as DuckDB's "Interrupted" error,
    and the caller reads `signum`. A handler that raises could fire anywhere the
    main thread next runs Python, say inside the `except` that reports DuckDB's
    error, and escape the code meant to catch it: the SQL shell's Ctrl-C would
    then end the shell instead of the query."""
    got = Deferred()

    def note(signum, _frame):
        _record(signum)
        got.signum = signum

    for sig in _CAUGHT:
        signal.signal(sig, note)
    try:
        yield got
    finally:
        for sig in _CAUGHT:
            signal.signal(sig, on_signal)


def install() -> None:
    """Call from the main thread, once."""
    for sig in _CAUGHT:
        signal.signal(sig, on_signal)
    _watch()


def _watch() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the C handler must never block
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(target=_interrupt_queries, args=(read_end,), name="signal-watch", daemon=True).start()


def _interrupt_queries(read_end: int) -> None:
    while True:
        try:
            woken_by = os.read(read_end, 64)
        except OSError:
            return
        if not woken_by:
            return
        caught = sum(1 for signum in woken_by if signum in _CAUGHT)
        if caught:
            _interrupt_until_handled(caught)


def _interrupt_until_handled(caught: int) -> None:
    """Interrupt the running queries, and again every 50 ms until the Python
    handler has run. Once is not always enough: a Ctrl-C that lands while
    DuckDB is still binding or planning the query (a store of Parquet files
    opens each of them first) is forgotten when execution starts, and the
    query then runs to its end (`select count(*) from events a, events b,
    events c`: hours) with the main thread inside it."""
    global _seen_count
    _seen_count += caught
    deadline = time.monotonic() + _GIVE_UP_S
    while True:
        # Connections register in advisor.store.interrupts: a command that never
        # loaded it (`advisor io` on blktrace files) has no query to stop. The main
        # thread may be inside its import (at `import duckdb`, 0.3 s into an ingest):
        # the module is in sys.modules then, without interrupt_all yet, and no
        # connection can be registered either.
        interrupt_all = getattr(sys.modules.get("advisor.store.interrupts"), "interrupt_all", None)
        if interrupt_all is not None:
            interrupt_all()
        if _handled_count >= _seen_count or time.monotonic() > deadline:
            return
        time.sleep(_AGAIN_S)


def handled() -> None:
    """A Ctrl-C the command dealt with itself (the SQL shell clears its line
    and goes on): it does not decide the exit code."""
    global received
    received = None
