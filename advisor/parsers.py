"""Access to the Rust parsers (`advisor._parsers`), with their failures mapped
onto the advisor's exception tree."""

from __future__ import annotations

from pathlib import Path

from advisor import _parsers
from advisor.errors import TraceFormatError, TraceIOError, UnsupportedTraceError

_KINDS = {
    "io": TraceIOError,
    "format": TraceFormatError,
    "corrupt": TraceFormatError,
    "unsupported": UnsupportedTraceError,
}


def open_trace(path: Path) -> "_parsers.Trace":
    """Open a trace file; the format is detected from its contents."""
    try:
        return _parsers.open_trace(str(path))
    except _parsers.ParseFailure as e:
        kind, message = e.args
        raise _KINDS.get(kind, TraceFormatError)(message) from None


def file_digest(path: Path) -> str:
    """BLAKE3 of the file's bytes (the cache key of its store)."""
    try:
        return _parsers.file_digest(str(path))
    except OSError as e:
        raise TraceIOError(f"{path}: {e.strerror or e}") from None


PARSER_VERSION = _parsers.__version__
