"""Reading starts before the CLI loads.

Loading Typer, Rich, the commands, DuckDB and Arrow takes 0.3-0.4 s, as long
as the parser needs for a million blktrace records or 1.5 million trace.dat
events. `entry.main` hands the command line here first. When it is plainly

* `advisor io FILE... [--device D] [--btt-compat] [--json] [--limit N]` on
  binary blktrace data, the parser starts at once on its own thread
  (advisor/io/fast.py) while Python loads the rest; the `io` command takes the
  running job only if its own parsed arguments ask for the same summary;
* `advisor ingest FILE [-o STORE] [--force] ...` or `advisor analyze FILE ...`
  on one trace.dat whose store is not cached yet, the trace is opened and its
  reading begun (advisor/parsers.py `read_early`), with the limits ingest reads
  with; the parser fills its bounded buffers meanwhile, and ingest's
  `open_trace` takes it over.

Anything unusual on the line (another option, stdin, a directory, a file that
is not what it says) leaves the work to the command, as if this module did not
exist. Nothing here imports more than the parser module and the store's
settings.
"""

from __future__ import annotations

import os
import stat
from pathlib import PurePath

_started: tuple[tuple, object] | None = None

#: Per command: options taking a value -> (what the command calls it, None for
#: any value or the only value allowed, as the command spells it), and flags.
#: A later option overrides an earlier one, as on the command's own line.
_IO = ({"--device": ("device", None), "-d": ("device", None), "--limit": ("limit", None), "-n": ("limit", None)},
       {"--btt-compat", "--json"})
#: `-o` makes ingest write there rather than into the cache; `--force` re-reads
#: a cached capture.
_TRACE_COMMANDS = {
    "ingest": ({"-o": ("output", None), "--output": ("output", None), "-n": ("limit", None), "--limit": ("limit", None),
                "--store-format": ("format", "duckdb"), "--format": ("format", "duckdb"), "-f": ("format", "duckdb")},
               {"--force", "--json", "--strict"}),
    "analyze": ({"-k": ("kernel", None), "--kernel": ("kernel", None), "-r": ("rule", None), "--rule": ("rule", None),
                 "-n": ("limit", None), "--limit": ("limit", None), "--fail-on": ("fail_on", None),
                 "--rules-dir": ("rules_dir", None)},
                {"--json", "--plots"}),
}


def start(argv: list[str]) -> None:
    """Start reading for `advisor io|ingest|analyze ARGS` when the arguments are plain."""
    if argv and argv[0] in _TRACE_COMMANDS:
        _start_trace(argv[0], argv[1:])
    elif argv and argv[0] == "io":
        _start_io(argv[1:])


def _plain(argv: list[str], valued: dict[str, tuple[str, str | None]], flags: set[str]):
    """(paths, {name: value}, flags given) when the line holds only paths, `valued`
    options with a value they allow, and `flags`; else None."""
    paths: list[str] = []
    values: dict[str, str] = {}
    given: set[str] = set()
    args = iter(argv)
    for a in args:
        option, eq, value = a.partition("=")
        if option in valued:
            name, allowed = valued[option]
            value = value if eq else next(args, None)
            if value is None or (allowed is not None and value != allowed):
                return None
            values[name] = value
        elif a in flags:
            given.add(a)
        elif a.startswith("-"):
            return None  # "-" (stdin), --help, an option this module does not know
        else:
            paths.append(str(PurePath(a)))  # as the command's Path arguments print
    return paths, values, given


def _start_io(argv: list[str]) -> None:
    global _started
    line = _plain(argv, *_IO)
    if line is None:
        return
    paths, values, given = line
    device, btt_compat = values.get("device"), "--btt-compat" in given
    try:
        from advisor import _parsers  # noqa: PLC0415

        if not paths or not all(_parsers.is_blktrace(p) and not os.path.isdir(p) for p in paths):
            return
        job = _parsers.blktrace_io_summary(paths, device, btt_compat)
    except Exception:  # noqa: BLE001 - any failure is the command's to report, properly
        return
    _started = ((tuple(paths), device, btt_compat), job)


def take(paths: list[str], device: str | None, btt_compat: bool):
    """The job `start` began for exactly this summary, once; else None."""
    global _started
    if _started is None:
        return None
    key, job = _started
    _started = None
    return job if key == (tuple(paths), device, btt_compat) else None


def _start_trace(command: str, argv: list[str]) -> None:
    line = _plain(argv, *_TRACE_COMMANDS[command])
    if line is None or len(line[0]) != 1:
        return
    (path,), values, given = line
    output, force = values.get("output"), "--force" in given
    try:
        from advisor import parsers, store_settings  # noqa: PLC0415

        # A regular file only: the bytes of a pipe (<(zcat ...)) read here would be gone for the command.
        if not stat.S_ISREG(os.stat(path).st_mode) or parsers.detect_format(path) != "trace.dat":
            return
        if output is not None and not force and os.path.exists(output):
            return  # the command refuses to overwrite it
        if output is None and not force and store_settings.cache_path(parsers.file_digest(path)).exists():
            return  # cached: nothing to read
        limits = (store_settings.BATCH_ROWS, store_settings.MAX_PENDING_BYTES, store_settings.reader_threads())
        parsers.read_early(path, *limits)
    except Exception:  # noqa: BLE001 - any failure is the command's to report, properly
        return
