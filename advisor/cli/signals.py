"""SIGINT and SIGTERM while a command runs: unwound as KeyboardInterrupt so
that clean-up runs (an ingest removes its temporary store), and remembered,
so that the exit code is 128 + the signal's number whatever exception the
interrupt becomes on its way out (DuckDB's "Query interrupted", an error
raised while cleaning up)."""

from __future__ import annotations

import signal

#: The signal that is ending the command, if any.
received: int | None = None


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`)."""


def on_signal(signum, _frame) -> None:
    global received
    received = signum
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def install() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)


def handled() -> None:
    """A Ctrl-C the command dealt with itself (the SQL shell clears its line
    and goes on): it does not decide the exit code."""
    global received
    received = None
