"""Query results in the formats `advisor sql` offers."""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from pathlib import Path

import duckdb

from advisor.cli.console import _default, err, file_console, more_rows, out, table, terminal
from advisor.errors import QueryError, UsageError
from advisor.store.output import replacing

FORMATS = ("table", "csv", "json", "parquet")
FETCH = 10_000


def run_query(con, query: str):
    try:
        return con.execute(query)
    except duckdb.Error as e:
        raise QueryError(one_line(e)) from None


def one_line(e: Exception) -> str:
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    # DuckDB adds "LINE 1: <query>" context on the following lines: keep the
    # message, which names the problem.
    return first


def write(cur, fmt: str, output: Path | None, max_rows: int, con=None, query: str | None = None) -> int:
    """Write the result of the executed cursor; returns rows written."""
    if fmt == "parquet":
        if output is None:
            raise UsageError("--format parquet needs -o FILE")
        # Re-run as COPY so DuckDB writes the file itself.
        try:
            con.execute(f"COPY ({query.strip().rstrip(';')}) TO '{_sql_path(output)}' (FORMAT parquet)")
        except duckdb.Error as e:
            raise QueryError(one_line(e)) from None
        return con.fetchone()[0] if con.description else 0
    if cur.description is None:
        return 0
    names = [d[0] for d in cur.description]
    if fmt == "csv":
        return _csv(cur, names, output)
    if fmt == "json":
        return _json(cur, names, output)
    return _table(cur, names, max_rows, output)


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")


def _batches(cur):
    while True:
        rows = cur.fetchmany(FETCH)
        if not rows:
            return
        yield rows


@contextlib.contextmanager
def _open(output: Path | None):
    """stdout, or the -o file (written whole or not at all)."""
    if output is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with replacing(output, newline="") as f:
        yield f


def _csv(cur, names, output) -> int:
    with _open(output) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        n = 0
        for rows in _batches(cur):
            w.writerows(rows)
            n += len(rows)
    return n


def _json(cur, names, output) -> int:
    with _open(output) as f:
        f.write("[")
        n = 0
        for rows in _batches(cur):
            for r in rows:
                f.write(",\n" if n else "\n")
                f.write(json.dumps(dict(zip(names, r)), default=_default))
                n += 1
        f.write("\n]\n" if n else "]\n")
    return n


def _table(cur, names, max_rows, output) -> int:
    rows = cur.fetchmany(max_rows + 1)
    shown = rows[:max_rows]
    # Fitted, not Rich's shrinking: that folded numbers over lines ("8222/6891/...") and,
    # 40 columns on 80, left only the last. On a terminal values wrap between words only;
    # piped or in a file a row stays one line whatever its width (grep and awk read rows),
    # and a table that does not fit is printed whole, wider than the terminal.
    t = table(*names, abbreviate=False, names=tuple(names) if output or not terminal() else ())
    for r in shown:
        t.add_row(*("NULL" if v is None else str(v) for v in r))
    if output:
        with replacing(output) as f:
            file_console(f).print(t)
    else:
        out.print(t)
    if len(rows) > max_rows:
        rest = len(cur.fetchall()) + 1
        # Under the table, where the reader of the cut table looks (stdout).
        (out if output is None else err).print(more_rows(rest, "--limit, or --format csv/json for all"))
        return max_rows + rest
    return len(shown)


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    return fmt


#: Statements whose result is rows to show (the others: CREATE, INSERT, SET,
#: ... return a count or a flag).
_ROWS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "CALL", "EXECUTE"})


def statements(con, query: str) -> list:
    try:
        found = con.extract_statements(query)
    except duckdb.Error as e:
        raise QueryError(one_line(e)) from None
    if not found:
        raise UsageError("no SQL statement given")
    return found


def refuse_export_of_views(con, found: list) -> None:
    """EXPORT DATABASE writes a view as its definition: a cached store's event tables are
    views over Parquet files in the cache (`STORE.parts/`), so the export would hold six
    small tables and views naming the cache's absolute paths, which break when the cache
    is cleared or the directory is copied elsewhere. Refused before any statement runs,
    naming the commands that write a store standing alone."""
    if not any(s.type.name == "EXPORT" for s in found):
        return
    from advisor.store import parts  # noqa: PLC0415

    try:
        read = parts.read_by(con)
    except duckdb.Error:
        return
    if read is not None:
        raise UsageError(
            f"EXPORT DATABASE would write this store's event tables as views over its files in {read}, not their rows: "
            "for a copy that stands alone, `advisor ingest --single-file -o FILE.duckdb TRACE` (one DuckDB file) "
            "or `advisor ingest --store-format parquet -o DIR/ TRACE` (one Parquet file per table)"
        )


def returns_rows(statement) -> bool:
    return statement.type.name in _ROWS


def run_statements(con, query: str, fmt: str, output: Path | None, max_rows: int) -> int:
    """Run every ';'-separated statement in order. As a table on the terminal
    every statement that returns rows is shown; a file or a csv/json/parquet
    document holds one result, so more than one such statement is refused
    before any runs. Returns the rows written."""
    found = statements(con, query)
    refuse_export_of_views(con, found)
    shown = [s for s in found if returns_rows(s)]
    if len(shown) > 1 and (fmt != "table" or output is not None):
        raise UsageError(
            f"{len(shown)} statements return rows, but {'a file' if output else f'--format {fmt}'} holds one result: run them one at a time"
        )
    last = shown[-1] if shown else found[-1]
    n = 0
    for s in found:
        cur = run_query(con, s)
        if s is last or (returns_rows(s) and fmt == "table" and output is None):
            n += write(cur, fmt, output, max_rows, con=con, query=s.query)
    return n
