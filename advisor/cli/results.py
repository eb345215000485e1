"""Query results in the formats `advisor sql` offers."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import duckdb
from advisor.cli.console import _default, err, more_rows, out, table
from advisor.errors import QueryError, UsageError

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


def _open(output: Path | None):
    return open(output, "w", newline="") if output else sys.stdout


def _csv(cur, names, output) -> int:
    f = _open(output)
    w = csv.writer(f, lineterminator="\n")
    w.writerow(names)
    n = 0
    for rows in _batches(cur):
        w.writerows(rows)
        n += len(rows)
    if output:
        f.close()
    return n


def _json(cur, names, output) -> int:
    f = _open(output)
    f.write("[")
    n = 0
    for rows in _batches(cur):
        for r in rows:
            f.write(",\n" if n else "\n")
            f.write(json.dumps(dict(zip(names, r)), default=_default))
            n += 1
    f.write("\n]\n" if n else "]\n")
    if output:
        f.close()
    else:
        f.flush()
    return n


def _table(cur, names, max_rows, output) -> int:
    rows = cur.fetchmany(max_rows + 1)
    shown = rows[:max_rows]
    t = table(*names)
    for r in shown:
        t.add_row(*("NULL" if v is None else str(v) for v in r))
    if output:
        from rich.console import Console

        with open(output, "w") as f:
            Console(file=f, width=200).print(t)
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
