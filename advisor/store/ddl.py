"""SQL text for the store: column types from Arrow schemas, identifiers."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


@functools.cache
def _simple() -> dict:
    # pyarrow loads here, not with the store: a query on a cached store never needs it.
    import pyarrow as pa  # noqa: PLC0415

    return {
        pa.int8(): "TINYINT",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.uint8(): "UTINYINT",
        pa.uint16(): "USMALLINT",
        pa.uint32(): "UINTEGER",
        pa.uint64(): "UBIGINT",
        pa.bool_(): "BOOLEAN",
        pa.float64(): "DOUBLE",
        pa.string(): "VARCHAR",
        pa.large_string(): "VARCHAR",
        pa.binary(): "BLOB",
        pa.large_binary(): "BLOB",
    }


def duckdb_type(t: pa.DataType) -> str:
    """The DuckDB column type DuckDB itself gives an Arrow column of type `t`."""
    simple = _simple()
    if t in simple:
        return simple[t]
    import pyarrow as pa  # noqa: PLC0415 - loaded by _simple() already

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return duckdb_type(t.value_type) + "[]"
    if pa.types.is_dictionary(t):
        return duckdb_type(t.value_type)
    raise TypeError(f"no DuckDB type for Arrow {t}")


def ident(name: str) -> str:
    """Quote an identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    """Quote a string literal."""
    return "'" + value.replace("'", "''") + "'"


def create_table(qualified: str, schema: pa.Schema) -> str:
    cols = ", ".join(f"{ident(f.name)} {duckdb_type(f.type)}" for f in schema)
    return f"CREATE TABLE {qualified} ({cols});"
