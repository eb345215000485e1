"""The `advisor` entry point: commands, and exit codes as DESIGN.md sets them
(0 clean, 1 findings at --fail-on, 2 usage/IO/format error, 101 internal)."""

from __future__ import annotations

import signal
import sys

import typer
from rich.markup import escape

from advisor.cli.analyze_cmd import analyze
from advisor.cli.cache_cmd import cache
from advisor.cli.capture_cmd import capture
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


@app.callback(epilog="Example: advisor analyze sample_traces/sync-xfs-v6.dat   (each command's --help has its own example)")
def _options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_show_version, is_eager=True),
) -> None:
    """Writeback Advisor: SQL over kernel writeback captures, diagnosis and what-if replay."""
    from advisor.store.cache_admin import enforce_cap  # noqa: PLC0415

    ctx.call_on_close(enforce_cap)  # $WRITEBACK_ADVISOR_CACHE_MAX, once the command is done

INTERNAL_ERROR = 101


def run(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors become one line on stderr and exit 2."""
    try:
        # Without standalone mode Click hands back typer.Exit codes as the result.
        code = app(args=argv, prog_name="advisor", standalone_mode=False)
        sys.stdout.flush()  # inside the try: a reader that went away is handled below
        return code if isinstance(code, int) else 0
    except BrokenPipeError:
        return _reader_gone()
    except SystemExit as e:
        # Click turns EPIPE into sys.exit(1) (typer/core.py _main); a closed pipe is not an error.
        if isinstance(e.__context__, BrokenPipeError):
            return _reader_gone()
        raise
    except AdvisorError as e:
        err.print(f"[red]advisor: error:[/] {escape(str(e))}", markup=True, highlight=False, soft_wrap=True)
        return e.exit_code
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err.print("aborted")
        return 130
    except KeyboardInterrupt as e:
        err.print("interrupted")
        return 143 if isinstance(e, _Terminated) else 130
    except typer.TyperException as e:
        # Click's own errors (unknown option, missing argument, no command).
        if type(e).__name__ == "NoArgsIsHelpError":
            e.show(file=sys.stderr)
            return 0
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        ctx = getattr(e, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        err.print(f"[red]advisor: error:[/] {message}{hint}", markup=True, highlight=False, soft_wrap=True)
        return getattr(e, "exit_code", 2) or 2
    except Exception as e:  # noqa: BLE001 - the last line of defence
        import traceback

        traceback.print_exc()
        err.print(f"[red]advisor: internal error ({type(e).__name__}); please report it with the traceback above[/]")
        return INTERNAL_ERROR


def _reader_gone() -> int:
    """`advisor io X | head -1`: head read what it wanted and closed the pipe. Like `git log
    | head -1`, stop quietly and exit 0; stdout goes to /dev/null so that Python's own flush
    at exit does not report the closed pipe."""
    import os  # noqa: PLC0415

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`), unwound like Ctrl-C so that clean-up runs (an
    ingest removes its temporary store; see store/ingest.py)."""


def _on_sigterm(_signum, _frame) -> None:
    raise _Terminated()


def main() -> None:
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.exit(run())


if __name__ == "__main__":
    main()
