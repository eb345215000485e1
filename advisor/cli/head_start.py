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

#: Options of `advisor io` taking a value, and flags, as the command spells them.
_VALUED = {"--device": "device", "-d": "device", "--limit": None, "-n": None}
_FLAGS = {"--btt-compat": "btt_compat", "--json": None}


def start(argv: list[str]) -> None:
    """Start reading for `advisor io|ingest|analyze ARGS` when the arguments are plain."""
    global _started
    if argv and argv[0] in _TRACE_COMMANDS:
        _start_trace(argv[0], argv[1:])
        return
    if not argv or argv[0] != "io":
        return
    paths: list[str] = []
    device, btt_compat = None, False
    args = iter(argv[1:])
    for a in args:
        name, eq, value = a.partition("=")
        if name in _VALUED:
            value = value if eq else next(args, None)
            if value is None:
                return
            if _VALUED[name] == "device":
                device = value
        elif a in _FLAGS:
            btt_compat |= _FLAGS[a] == "btt_compat"
        elif a.startswith("-"):
            return  # "-" (stdin), --help, an option this module does not know
        else:
            paths.append(str(PurePath(a)))  # as the command's Path arguments print
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


#: Per command: options taking a value (None: any value; else the only value
#: allowed, as the command spells it), and flags. `-o` makes ingest write there
#: rather than into the cache; `--force` re-reads a cached capture.
_TRACE_COMMANDS = {
    "ingest": ({"-o": None, "--output": None, "-n": None, "--limit": None, "--store-format": "duckdb", "--format": "duckdb", "-f": "duckdb"},
               {"--force", "--json", "--strict"}),
    "analyze": ({"-k": None, "--kernel": None, "-r": None, "--rule": None, "-n": None, "--limit": None, "--fail-on": None,
                 "--rules-dir": None},
                {"--json", "--plots"}),
}


def _start_trace(command: str, argv: list[str]) -> None:
    valued, flags = _TRACE_COMMANDS[command]
    paths: list[str] = []
    output: str | None = None
    force = False
    args = iter(argv)
    for a in args:
        name, eq, value = a.partition("=")
        if name in valued:
            value = value if eq else next(args, None)
            if value is None or (valued[name] is not None and value != valued[name]):
                return
            if name in ("-o", "--output"):
                output = value
        elif a in flags:
            force |= a == "--force"
        elif a.startswith("-"):
            return  # "-" (stdin), --help, an option this module does not know
        else:
            paths.append(str(PurePath(a)))  # as the command's Path arguments print
    if len(paths) != 1:
        return
    try:
        from advisor import parsers, store_settings  # noqa: PLC0415

        path = paths[0]
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
