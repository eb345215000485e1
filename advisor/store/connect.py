"""duckdb.connect for a store file of any name.

DuckDB names a database after its file, up to the first dot: `/data/raw.duckdb` and the
ingest's temporary `.raw.duckdb.1f2e3d4c.tmp` are both the catalog `raw`, the name of the
store's own schema, and every view reading `raw.block_rq_issue` then fails with "Binder
Error: Ambiguous reference to catalog or schema "raw"". Such a file is attached under
another name instead, with its spill directory where DuckDB puts a file database's
(`STORE.tmp`), not the working directory an in-memory database would use.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

#: The schemas a store holds besides main (DuckDB itself renames a file called main,
#: temp or system: main.duckdb is the catalog main_db).
SCHEMAS = frozenset({"raw"})
#: The catalog name a store file is attached under when its own would collide.
ALIAS = "store_db"


def connect(path: Path | str, read_only: bool = False, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), read_only=read_only, config=config or {})
    try:
        if con.execute("SELECT current_database()").fetchone()[0].lower() not in SCHEMAS:
            return con
    except BaseException:
        con.close()
        raise
    con.close()
    con = duckdb.connect(":memory:", config=config or {})
    try:
        con.execute("SET temp_directory = ?", [f"{path}.tmp"])
        con.execute(f"ATTACH ? AS {ALIAS}{' (READ_ONLY)' if read_only else ''}", [str(path)])
        con.execute(f"USE {ALIAS}")
    except BaseException:
        con.close()
        raise
    return con
