"""SQL text for the store: identifiers, literals and table declarations; whether a table is there."""

from __future__ import annotations


def ident(name: str) -> str:
    """Quote an identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    """Quote a string literal."""
    return "'" + value.replace("'", "''") + "'"


def has_table(con, name: str, schema: str | None = None) -> bool:
    """Whether a table or view `name` exists: in `schema` of the store (the connection's
    database) when given ("raw" holds the parsed tables, "main" the store's own views),
    else in any schema, temporary views included."""
    where = "table_name = ?" + (" AND table_schema = ? AND table_catalog = current_database()" if schema else "")
    # fetchall: a result read with fetchone stays open, and DuckDB refuses a relation
    # (con.sql) on the connection until it is finished.
    return bool(con.execute(f"SELECT count(*) FROM information_schema.tables WHERE {where}",
                            [name, schema] if schema else [name]).fetchall()[0][0])


#: (name, DuckDB type) of each column of a table: what the parsers give for a
#: reader's schema (advisor.parsers.duckdb_columns), DuckDB's own type for it.
Columns = list[tuple[str, str]]


def create_table(qualified: str, columns: Columns) -> str:
    cols = ", ".join(f"{ident(name)} {sql_type}" for name, sql_type in columns)
    return f"CREATE TABLE {qualified} ({cols});"
