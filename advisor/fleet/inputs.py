"""The captures a fleet run reads: paths, glob patterns, and @FILE lists (one path or
pattern a line; blank lines and lines starting with # are skipped; relative paths are
relative to the list file)."""

from __future__ import annotations

import glob
from pathlib import Path

from advisor.errors import TraceIOError, UsageError


def expand(args: list[str]) -> list[Path]:
    """Every capture named, each once, in the order given."""
    out: dict[Path, None] = {}
    for arg in args:
        for p in _one(arg, Path.cwd()):
            out.setdefault(p)
    if not out:
        raise UsageError("no captures given")
    return list(out)


def _one(arg: str, base: Path) -> list[Path]:
    if arg.startswith("@"):
        listfile = Path(arg[1:])
        try:
            lines = listfile.read_text().splitlines()
        except OSError as e:
            raise TraceIOError(f"{listfile}: {e.strerror}") from None
        found = []
        for n, line in enumerate(lines, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                found += _one(line, listfile.parent)
            except (TraceIOError, UsageError) as e:
                raise type(e)(f"{listfile}:{n}: {e}") from None
        return found
    path = Path(arg) if Path(arg).is_absolute() else base / arg
    if any(c in arg for c in "*?["):
        matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True) if Path(m).is_file())
        if not matches:
            raise UsageError(f"{arg}: no file matches")
        return [_relative(m) for m in matches]
    if not path.is_file():
        raise TraceIOError(f"{arg}: No such file")
    return [_relative(path)]


def _relative(p: Path) -> Path:
    """Paths under the working directory stay relative: the findings name them as given."""
    try:
        return p.relative_to(Path.cwd())
    except ValueError:
        return p
