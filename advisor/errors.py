"""The exception tree of the advisor. User errors end the CLI with one line and exit 2."""


class AdvisorError(Exception):
    """Base of every error the user can act on (bad input, bad usage)."""

    exit_code = 2


class TraceFormatError(AdvisorError):
    """A trace file is unreadable, of an unknown format, or damaged beyond use."""


class TraceIOError(AdvisorError):
    """A file could not be opened or read."""


class DamagedCaptureError(TraceFormatError):
    """A capture read up to damage: what came before it is in the store."""


class UnsupportedTraceError(AdvisorError):
    """A trace uses a feature this version does not read."""


class QueryError(AdvisorError):
    """A SQL query failed."""


class UsageError(AdvisorError):
    """Arguments that do not make sense together."""
