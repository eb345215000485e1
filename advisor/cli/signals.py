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

import os
import signal
import threading

from advisor.store.interrupts import interrupt_all

#: The signal that is ending the command, if any.
received: int | None = None

_CAUGHT = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`)."""


def on_signal(signum, _frame) -> None:
    global received
    received = signum
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


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
        if any(signum in _CAUGHT for signum in woken_by):
            interrupt_all()


def handled() -> None:
    """A Ctrl-C the command dealt with itself (the SQL shell clears its line
    and goes on): it does not decide the exit code."""
    global received
    received = None
