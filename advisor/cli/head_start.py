"""`advisor io` on blktrace files starts reading them before the CLI loads.

Loading Typer, Rich and the commands takes about 0.2 s, as long as the parser
needs for a million blktrace records. `entry.main` hands the command line here
first: when it is plainly `advisor io FILE... [--device D] [--btt-compat]
[--json] [--limit N]` on binary blktrace data, the parser starts at once on
its own thread (advisor/io/fast.py) while Python loads the rest. The `io`
command takes the running job only if its own parsed arguments ask for the
same summary; anything unusual on the line (another option, stdin, a
directory) leaves the work to the command, as if this module did not exist.
Nothing here imports more than the parser module.
"""

from __future__ import annotations

import os
from pathlib import PurePath

_started: tuple[tuple, object] | None = None

#: Options of `advisor io` taking a value, and flags, as the command spells them.
_VALUED = {"--device": "device", "-d": "device", "--limit": None, "-n": None}
_FLAGS = {"--btt-compat": "btt_compat", "--json": None}


def start(argv: list[str]) -> None:
    """Start the parser for `advisor io ARGS` when the arguments are plain."""
    global _started
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
