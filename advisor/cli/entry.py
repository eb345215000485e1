"""The `advisor` command's first code: it catches SIGINT and SIGTERM before
the CLI's modules load (Typer, Rich, DuckDB: about 0.3 s), so that Ctrl-C or
`kill` at any moment from here on ends the process with 130 or 143 and one
line, never a KeyboardInterrupt traceback from the middle of an import.

Before this line only the interpreter's own start runs (about 15 ms); a
Ctrl-C there is Python's to report."""

from __future__ import annotations

# _signal, not signal: the latter imports enum first (5 ms more of window).
import _signal
import os


def leave_while_loading(signum, _frame) -> None:
    # Nothing to clean up yet: say so and leave without unwinding the import.
    try:
        os.write(2, b"interrupted\n")
    finally:
        os._exit(128 + signum)


def main() -> None:
    for sig in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(sig, leave_while_loading)
    import sys

    from advisor.cli import head_start

    head_start.start(sys.argv[1:])  # io, ingest, analyze on plain arguments: reading starts now
    from advisor.cli.main import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
