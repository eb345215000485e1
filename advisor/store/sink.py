"""Where the parsers' batches go while a store is written: Parquet parts with
views in the catalog (the default), or DuckDB's own tables (one self-contained
file). Both give the catalog the same tables, with the same names, columns and
rows in the same order.

An event type the capture recorded but never saw gets no stored table: its view in
the main schema is an empty relation with the event's columns (views.py). An `-e all`
capture records 2,323 formats and sees about 300 of them; making an empty table for
each of the other 2,025 took 0.8 s of a 4.6 s ingest, each a DuckDB catalog entry
that stays resident until the ingest ends."""

from __future__ import annotations

from advisor.store import parts
from advisor.store.ddl import Columns, create_table, ident


def qualified(schema: str, name: str) -> str:
    return ident(name) if schema == "main" else f"{schema}.{ident(name)}"


class DuckDBTables:
    """Every batch inserted into a DuckDB table of the catalog."""

    def __init__(self, con):
        self.con = con
        self._ddl: list[str] = []
        self._on_first_rows: dict[str, Columns] = {}
        # One DuckDB thread appends each batch straight into the table's row groups.
        # With a thread per core, each insert of a batch is split into partial row
        # groups that the commit compresses and merges again: on 2.4 M blktrace records
        # 0.8 s more CPU and a store of 70 MB instead of 44 MB; on 17 M ftrace events
        # 2.4 s more CPU and 92 MB instead of 58 MB (benchmarks/README.md).
        con.execute("SET threads = 1")

    def declare(self, schema: str, name: str, columns: Columns, when_empty: bool = True) -> None:
        """`when_empty=False`: the table is made only if rows come."""
        if when_empty:
            self._ddl.append(create_table(qualified(schema, name), columns))
        else:
            self._on_first_rows[qualified(schema, name)] = columns

    def _flush_ddl(self) -> None:
        # One statement for every table: per-statement overhead dominates small tables.
        if self._ddl:
            self.con.execute("\n".join(self._ddl))
            self._ddl = []

    def append(self, schema: str, name: str, reader) -> int:
        columns = self._on_first_rows.pop(qualified(schema, name), None)
        if columns is not None:
            self._ddl.append(create_table(qualified(schema, name), columns))
        self._flush_ddl()
        self.con.execute(f"INSERT INTO {qualified(schema, name)} SELECT * FROM reader")
        row = self.con.fetchone()
        return int(row[0]) if row else 0

    def finish(self) -> None:
        self._flush_ddl()
        self.con.execute("RESET threads")


class ParquetTables:
    """Every batch appended to the table's Parquet file; at the end the catalog
    gets a view over each file, and an empty table for each side table without rows."""

    def __init__(self, con, writer: parts.Writer):
        self.con = con
        self.writer = writer
        self._declared: dict[tuple[str, str], Columns] = {}
        self._when_empty: set[tuple[str, str]] = set()

    def declare(self, schema: str, name: str, columns: Columns, when_empty: bool = True) -> None:
        """`when_empty=False`: the table is made only if rows come."""
        self._declared[(schema, name)] = columns
        if when_empty:
            self._when_empty.add((schema, name))

    def append(self, schema: str, name: str, reader) -> int:
        return self.writer.write(f"{schema}.{name}", reader)

    def finish(self) -> None:
        self.writer.close()
        ddl = []
        for (schema, name), columns in self._declared.items():
            path = self.writer.paths.get(f"{schema}.{name}")
            target = qualified(schema, name)
            if path:
                ddl.append(parts.view_sql(target, path))
            elif (schema, name) in self._when_empty:
                ddl.append(create_table(target, columns))
        if ddl:
            self.con.execute("\n".join(ddl))
