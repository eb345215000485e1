"""Access to the Rust parsers (`advisor._parsers`), with their failures mapped
onto the advisor's exception tree."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

from advisor import _parsers
from advisor.errors import TraceFormatError, TraceIOError, UnsupportedTraceError

_KINDS = {
    "io": TraceIOError,
    "format": TraceFormatError,
    "corrupt": TraceFormatError,
    "unsupported": UnsupportedTraceError,
}


@contextmanager
def _failures_mapped():
    """The parser's ParseFailure(kind, message) as the advisor's exception of that kind."""
    try:
        yield
    except _parsers.ParseFailure as e:
        kind, message = e.args
        raise _KINDS.get(kind, TraceFormatError)(message) from None


def no_blktrace_records(label: str) -> TraceFormatError:
    """The error for blktrace input in which not one record was readable."""
    return TraceFormatError(f"{label}: no blktrace records in this input (empty files or stream)")


def open_trace(path: Path) -> "_parsers.Trace":
    """Open a trace file; the format is detected from its contents. A trace whose
    reading `read_early` began is handed over, once, with its running batches."""
    early = _early.pop(str(path), None)
    if early is not None:
        return early
    with _failures_mapped():
        return _parsers.open_trace(str(path))


#: Traces being read since before the command line loaded, by path as given.
_early: dict[str, "EarlyTrace"] = {}


class EarlyTrace:
    """A trace opened, and its reading begun, before the command that ingests it
    has loaded (advisor/cli/head_start.py): the parser thread decodes while Python
    imports the command line, DuckDB and Arrow (0.3-0.4 s), up to its memory bounds.
    It answers as the parser's own Trace does; `batches` hands over the running
    reader when asked with the same limits, and reads anew otherwise."""

    def __init__(self, path: str, limits: tuple[int, int, int]):
        self._path = path
        self._trace = _parsers.open_trace(path)
        self._limits = limits
        self._running = self._trace.batches(*limits)

    def __getattr__(self, name: str):
        return getattr(self._trace, name)

    def batches(self, batch_rows: int, max_pending_bytes: int, threads: int):
        running, self._running = self._running, None
        if running is not None and (batch_rows, max_pending_bytes, threads) == self._limits:
            return running
        with _failures_mapped():
            return _parsers.open_trace(self._path).batches(batch_rows, max_pending_bytes, threads)


def read_early(path: str, batch_rows: int, max_pending_bytes: int, threads: int) -> None:
    """Open a trace and start reading it now, for the `open_trace` that follows."""
    _early[path] = EarlyTrace(path, (batch_rows, max_pending_bytes, threads))


def open_blktrace(paths: list[Path]) -> "_parsers.Trace":
    """Open blktrace inputs parsed together: per-CPU sets (NAME or NAME.blktrace.N),
    a merged file (blkparse -d), or "-" for stdin."""
    with _failures_mapped():
        return _parsers.open_blktrace([str(p) for p in paths])


def blktrace_io_summary(paths: list[Path], device: str | None, btt_compat: bool) -> "_parsers.IoSummaryJob":
    """Start reading blktrace inputs for `advisor io`'s summary alone (advisor/io/fast.py)."""
    with _failures_mapped():
        return _parsers.blktrace_io_summary([str(p) for p in paths], device, btt_compat)


def is_blktrace(path: Path) -> bool:
    return _parsers.is_blktrace(str(path))


def detect_format(path: Path) -> str:
    """"blktrace", "blkparse-text", "trace.dat" or "ftrace-text", from the first bytes."""
    with _failures_mapped():
        return _parsers.detect_format(str(path))


def blktrace_files(path: Path) -> list[Path]:
    return [Path(p) for p in _parsers.blktrace_files(str(path))]


def duckdb_columns(reader) -> list[tuple[str, str]]:
    """(name, DuckDB type) of each column of a reader's schema; no row is read."""
    return _parsers.duckdb_columns(reader)


def text_digest(text: str) -> str:
    """BLAKE3 of a text: the cache key of several inputs (their names and digests)."""
    return _parsers.text_digest(text)


def file_digest(path: Path) -> str:
    """BLAKE3 of the file's bytes (the cache key of its store). Asked twice in one
    command (advisor/cli/head_start.py looks the cache up before the command does),
    a file whose inode, size and times have not changed is not read again."""
    try:
        st = os.stat(path)
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = _digests.get(str(path))
        if known is not None and known[0] == key:
            return known[1]
        digest = _parsers.file_digest(str(path))
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror or e}") from None
    if stat.S_ISREG(st.st_mode):  # a pipe's bytes are not there to read twice
        _digests[str(path)] = (key, digest)
    return digest


_digests: dict[str, tuple[tuple, str]] = {}


PARSER_VERSION = _parsers.__version__
