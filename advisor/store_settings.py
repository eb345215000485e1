"""Where a capture's store is cached and how a capture is read into it: outside
the `advisor.store` package, which loads DuckDB, so that the command line can
read them before its modules load (advisor/cli/head_start.py); ingest uses the
same values (advisor/store/ingest.py)."""

from __future__ import annotations

import os
from pathlib import Path

from advisor import parsers
from advisor.errors import UsageError

#: Bump when the layout of the store changes (invalidates cached stores).
STORE_VERSION = 16

#: Rows per record batch, and the cap on decoded bytes the parser buffers
#: across event types: what bounds ingest memory, whatever the trace size.
#: At 32 MiB rather than 64 MiB an 8.5 M-event capture ingests in the same time
#: with a peak RSS 43 MiB lower (212 MiB) and a store 0.6% larger (the largest
#: pending table is flushed as a smaller row group more often).
BATCH_ROWS = 262_144
MAX_PENDING_BYTES = 32 << 20

#: Threads that read a trace.dat (one merges the CPUs' events in time order, the
#: others decode them: parsers/src/tracedat/parallel.rs), and threads that encode
#: the store's Parquet files (each table on one of them: parsers/src/parts.rs);
#: $WRITEBACK_ADVISOR_THREADS sets both, 1 by default. With one of each, the
#: parser's thread decodes while the encoder's writes; on 2 CPUs that keeps both
#: busy: the parser alone reads 1.1-1.5x faster on two threads, but the whole
#: ingest is 0.72-0.99x, and on two encoder threads 0.91-0.98x (benchmarks/README.md).
#: No machine with more CPUs has measured it yet.
THREADS_VARIABLE = "WRITEBACK_ADVISOR_THREADS"


def reader_threads() -> int:
    """$WRITEBACK_ADVISOR_THREADS, else 1."""
    value = os.environ.get(THREADS_VARIABLE)
    if value:
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise UsageError(f"${THREADS_VARIABLE}: {value!r} is not a number of threads (1 or more)")
        return n
    return 1


def cache_dir() -> Path:
    env = os.environ.get("WRITEBACK_ADVISOR_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "writeback-advisor"


def cache_path(digest: str) -> Path:
    return cache_dir() / f"{digest[:32]}-p{parsers.PARSER_VERSION}-s{STORE_VERSION}.duckdb"


#: parse_stats rows counting events whose type id has no format in the file
#: (`unknown_event_id_1009`): kept raw in unknown_events, read by no view.
UNKNOWN_TYPE_PREFIX = "unknown_event_id_"
