"""The Python API, for notebooks and scripts: a capture (or a store) as a DuckDB
connection and Arrow tables, and `analyze` / `replay` / `report` returning plain data.

    >>> import advisor
    >>> with advisor.open("trace.dat") as t:
    ...     t.sql("select count(*) as n from events").to_pylist()
    [{'n': 45520}]

The same cached store as the CLI is used: a capture is parsed once.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import duckdb
import pyarrow as pa

from advisor.analyze import diagnose
from advisor.errors import QueryError, TraceIOError, UsageError
from advisor.kernel import parse_release
from advisor.report import build
from advisor.rules import load_rules
from advisor.store import open_store, store_for
from advisor.store.cache import given_store, is_store
from advisor.views import attach


class Capture:
    """One incident's store, open read-only. Use as a context manager or call close()."""

    def __init__(self, store: Path, label: str):
        self.store = store
        self.label = label
        #: The DuckDB connection: every table and view of the data contract (README, DESIGN.md),
        #: the domain views included (sync_ops, fsync_ops, dirtying, reclaim, ...).
        self.con = open_store(store)
        #: What each domain view is built from in this capture, and what it cannot show.
        self.views = attach(self.con)

    def __enter__(self) -> "Capture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def __repr__(self) -> str:
        return f"<advisor.Capture {self.label!r} store={str(self.store)!r}>"

    @property
    def tables(self) -> list[str]:
        """Names of the queryable tables and views (event tables with rows, and the rest)."""
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema IN ('main', 'temp') ORDER BY table_name"
        ).fetchall()
        return [r[0] for r in rows]

    def sql(self, query: str, params: list | None = None) -> pa.Table:
        """The result of a query as an Arrow table."""
        try:
            return self.con.sql(query, params=params).to_arrow_table()
        except duckdb.Error as e:
            raise QueryError(str(e).splitlines()[0]) from None

    def table(self, name: str) -> pa.Table:
        """A whole table or view as an Arrow table, e.g. t.table("global_dirty_state")."""
        if name not in self.tables:
            raise UsageError(f"{self.label}: no table {name!r}; see .tables")
        return self.sql(f'SELECT * FROM "{name}"')

    def analyze(self, kernel: str | None = None, rules: list[str] | None = None) -> dict:
        """The analysis document (what `advisor analyze --json` prints)."""
        release = parse_release(kernel) if kernel else None
        return diagnose(self.con, load_rules(None, rules), release, self.label)

    def replay(self, problem: str | list[str] | None = None, policy: str | list[str] | None = None,
               kernel: str | None = None) -> dict:
        """The replay document (what `advisor replay --json` prints); `policy` as
        "PROBLEM=POLICY[,POLICY]"."""
        problems = [problem] if isinstance(problem, str) else problem
        policies = [policy] if isinstance(policy, str) else policy
        from advisor.analyze import replay as engine  # the models: loaded only when a replay runs

        doc = engine.replay_store(self.con, self.label, problems, policies, kernel)
        if doc is None:
            raise UsageError(f"{self.label}: {engine.nothing_to_replay(self.con)}")
        return doc

    def report(self, path: str | PathLike, kernel: str | None = None) -> Path:
        """Write the HTML report (as `advisor report`); returns its path."""
        out = Path(path)
        release = parse_release(kernel) if kernel else None
        out.write_text(build(self.con, self.label, load_rules(), release, kernel), encoding="utf-8")
        return out


def open(*paths: str | PathLike) -> Capture:  # noqa: A001 - advisor.open reads like the builtin, on purpose
    """Open a capture (trace.dat, ftrace text, blktrace files of one incident) or a store.

    Captures are ingested into the cached store on first use."""
    if not paths:
        raise UsageError("advisor.open needs at least one capture or store")
    files = [Path(p) for p in paths]
    for f in files:
        if not f.exists():
            raise TraceIOError(f"{f}: No such file or directory")
    label = str(files[0]) if len(files) == 1 else f"{len(files)} inputs"
    if len(files) == 1 and files[0].is_file() and is_store(files[0]):
        return Capture(given_store(files[0]), label)
    return Capture(store_for(files).store, label)
