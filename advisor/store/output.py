"""Files the user names with -o: written whole or not at all, and never in
place of a directory or a device."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from advisor.errors import TraceIOError


@contextlib.contextmanager
def replacing(path: Path, newline: str | None = None):
    """A text file object whose content becomes `path` when the block ends
    without error. It is written beside `path` and renamed over it, so that
    a full disk or Ctrl-C leaves the previous file (or none), never a cut one
    that looks complete. Anything but a regular file — a device, a FIFO, a
    symbolic link such as /dev/stdout -> /proc/self/fd/1 — is written
    directly: renaming over it would replace the node or the link itself."""
    path = Path(path)
    kind = _kind(path)
    if kind == "directory":
        raise TraceIOError(f"{path}: is a directory")
    if kind == "other":
        try:
            with open(path, "w", encoding="utf-8", newline=newline) as f:
                yield f
        except OSError as e:
            raise TraceIOError(f"{path}: cannot write: {e.strerror}") from None
        return
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline=newline) as f:
            yield f
        os.replace(tmp, path)
    except OSError as e:
        raise TraceIOError(f"{path}: cannot write: {e.strerror}") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def _kind(path: Path) -> str:
    """"new", "regular" (replaced by rename), "directory", or "other" (written in place)."""
    try:
        if stat.S_ISREG(path.lstat().st_mode):
            return "regular"
        mode = path.stat().st_mode
    except FileNotFoundError:
        # No file, or a link to none (written through: the link stays).
        return "new" if not path.is_symlink() else "other"
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror}") from None
    return "directory" if stat.S_ISDIR(mode) else "other"
