"""The `advisor` entry point: commands, and exit codes as DESIGN.md sets them
(0 clean, 1 findings at --fail-on, 2 usage/IO/format error, 101 internal)."""

from __future__ import annotations

import os
import signal
import sys

import typer
from rich.markup import escape

from advisor.cli.analyze_cmd import analyze
from advisor.cli.cache_cmd import cache
from advisor.cli.capture_cmd import capture
from advisor.cli import signals
from advisor.cli.console import err, real_metavars
from advisor.cli.diff_cmd import diff
from advisor.cli.fleet_cmd import fleet
from advisor.cli.ingest_cmd import ingest
from advisor.cli.io_cmd import io
from advisor.cli.replay_cmd import replay
from advisor.cli.report_cmd import report
from advisor.cli.sql_cmd import sql
from advisor.errors import AdvisorError

real_metavars()
app = typer.Typer(
    name="advisor",
    help="Writeback Advisor: SQL over kernel writeback captures, diagnosis and what-if replay.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)
app.command()(ingest)
app.command()(sql)
app.command()(io)
app.command()(analyze)
app.command()(capture)
app.command()(replay)
app.command()(report)
app.command()(diff)
app.add_typer(fleet, name="fleet")
app.add_typer(cache)


def _show_version(value: bool) -> None:
    if value:
        from advisor import __version__

        print(f"advisor (writeback-advisor) {__version__}")
        raise typer.Exit(0)


@app.callback(epilog="Example: advisor analyze trace.dat   (each command's --help has its own example)")
def _options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_show_version, is_eager=True),
) -> None:
    """Writeback Advisor: SQL over kernel writeback captures, diagnosis and what-if replay."""
    if os.environ.get("WRITEBACK_ADVISOR_CACHE_MAX"):  # cache_admin.CAP_VARIABLE; DuckDB loads only when set
        from advisor.store.cache_admin import enforce_cap  # noqa: PLC0415

        ctx.call_on_close(enforce_cap)  # once the command is done

INTERNAL_ERROR = 101


def run(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors and environment faults become one line on
    stderr and exit 2; signals 130 (SIGINT) or 143 (SIGTERM)."""
    try:
        # Without standalone mode Click hands back typer.Exit codes as the result.
        code = app(args=argv, prog_name="advisor", standalone_mode=False)
        sys.stdout.flush()  # inside the try: a reader that went away is handled below
        if signals.received is not None and code == 130:
            # Typer hands a Ctrl-C (or our SIGTERM) back as a silent 130.
            return _interrupted(signals.received)
        return code if isinstance(code, int) else 0
    except typer.Exit as e:
        if signals.received is not None and e.exit_code == 130:
            return _interrupted(signals.received)
        return e.exit_code
    except (KeyboardInterrupt, typer.Abort):
        return _interrupted(signals.received or signal.SIGINT)
    except BaseException as e:  # noqa: BLE001 - the last line of defence
        if signals.received is not None:
            return _interrupted(signals.received)
        if isinstance(e, AdvisorError):
            _error(str(e))
            return e.exit_code
        if isinstance(e, typer.TyperException):
            return _click_error(e)
        if isinstance(e, BrokenPipeError) or (isinstance(e, OSError) and e.filename == "standard output"):
            return _stdout_failed(e)
        if isinstance(e, SystemExit) and isinstance(e.__context__, BrokenPipeError):
            return _stdout_failed(e.__context__)  # Click turns EPIPE into sys.exit(1) (typer/core.py _main)
        fault = environment_fault(e)
        if fault is not None:
            _error(fault)
            return 2
        if not isinstance(e, Exception):
            raise
        import traceback

        traceback.print_exc()
        err.print(f"[red]advisor: internal error ({type(e).__name__}); please report it with the traceback above[/]")
        return INTERNAL_ERROR


def environment_fault(e: BaseException) -> str | None:
    """One line for a fault of the machine rather than of the advisor: a
    file that cannot be written or read (full disk, read-only file system,
    permissions), or DuckDB failing to write its file or get memory."""
    if isinstance(e, OSError):
        where = e.filename or ""
        why = e.strerror or type(e).__name__
        return f"{where}: {why}" if where else why
    if isinstance(e, MemoryError):
        return "out of memory"
    import duckdb

    if isinstance(e, (duckdb.IOException, duckdb.OutOfMemoryException, duckdb.PermissionException)):
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return None


def _error(message: str) -> None:
    err.print(f"[red]advisor: error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)


def _interrupted(signum: int) -> int:
    err.print("interrupted")
    return 128 + int(signum)


def _click_error(e) -> int:
    # Click's own errors (unknown option, missing argument, no command).
    if type(e).__name__ == "NoArgsIsHelpError":
        e.show(file=sys.stderr)
        return 0
    message = e.format_message() if hasattr(e, "format_message") else str(e)
    ctx = getattr(e, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    err.print(f"[red]advisor: error:[/] {message}{hint}", markup=True, highlight=False, soft_wrap=True)
    return getattr(e, "exit_code", 2) or 2


class _Stdout:
    """sys.stdout whose write errors name it: "standard output: No space
    left on device" rather than a bare errno (`advisor sql ... > /dev/full`)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as e:
            raise type(e)(e.errno, e.strerror, "standard output") from None

    def flush(self):
        try:
            return self._stream.flush()
        except OSError as e:
            raise type(e)(e.errno, e.strerror, "standard output") from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main() -> None:
    try:
        # Inside the try: a signal right after the handlers change (starting the
        # watcher thread takes milliseconds on a loaded machine) is one of ours.
        signals.install()
        sys.stdout = _Stdout(sys.stdout)
        code = run()
        # Results may still sit in stdout's buffer: a full disk or a closed
        # pipe shows up here, not in the command.
        sys.stdout.flush()
    except KeyboardInterrupt:
        code = _interrupted(signals.received or signal.SIGINT)
    except OSError as e:
        code = _stdout_failed(e)
    # No signal may interrupt the interpreter's own shutdown (a traceback from
    # an atexit hook or a flush): the exit code is decided.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    sys.exit(code)


def _stdout_failed(e: OSError) -> int:
    # Nothing more can reach stdout; Python would try again at exit.
    try:
        sys.stdout = open(os.devnull, "w")
        os.dup2(sys.stdout.fileno(), 1)
    except OSError:
        pass
    if isinstance(e, BrokenPipeError):
        # `advisor io X | head -1`: head read what it wanted and closed the
        # pipe; like `git log | head -1`, stop quietly and exit 0.
        return 0
    _error(f"standard output: {e.strerror or e}")
    return 2


if __name__ == "__main__":
    main()
