"""Access to the Rust parsers (`advisor._parsers`), with their failures mapped
onto the advisor's exception tree."""

from __future__ import annotations

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
    """Open a trace file; the format is detected from its contents."""
    with _failures_mapped():
        return _parsers.open_trace(str(path))


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


def text_digest(text: str) -> str:
    """BLAKE3 of a text: the cache key of several inputs (their names and digests)."""
    return _parsers.text_digest(text)


def file_digest(path: Path) -> str:
    """BLAKE3 of the file's bytes (the cache key of its store)."""
    try:
        return _parsers.file_digest(str(path))
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror or e}") from None


PARSER_VERSION = _parsers.__version__
