"""SQL text for the store: identifiers, literals and table declarations."""

from __future__ import annotations


def ident(name: str) -> str:
    """Quote an identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    """Quote a string literal."""
    return "'" + value.replace("'", "''") + "'"


#: (name, DuckDB type) of each column of a table: what the parsers give for a
#: reader's schema (advisor.parsers.duckdb_columns), DuckDB's own type for it.
Columns = list[tuple[str, str]]


def create_table(qualified: str, columns: Columns) -> str:
    cols = ", ".join(f"{ident(name)} {sql_type}" for name, sql_type in columns)
    return f"CREATE TABLE {qualified} ({cols});"
