"""SQL helpers every view, rule and replay query may use.

page_bytes(): the capture's page size (trace.dat records it; 4096 otherwise).
sym(event, field, value): the name an event's print format gives an enum value.
flag_names(event, field, value): the text trace-cmd prints for a __print_flags or
  __print_symbolic field (I_DIRTY_PAGES|I_SYNC|0x20000), see advisor.kernel.print_fmt.
num(value): the number of a field that text captures print with its name, 3(FLUSH_DELALLOC).
`__print_symbolic(REC->reason, {0, "background"}, {1, "vmscan"}, {2, "sync"}, ...)` in a
print_fmt: the names trace-cmd prints for an enum field. Numbers differ between kernels
(btrfs_flush_space's FLUSH_DELALLOC is 5 in 5.10 and in 6.18, ALLOC_CHUNK moved from 7 to
8 when FLUSH_DELALLOC_FULL came), so queries compare names, via sym().
"""

from __future__ import annotations

import contextlib
import functools
import re

from duckdb import sqltypes

from advisor.kernel.print_fmt import ValueNames, value_names

#: What each helper gives, for docs/data-contract.md.
HELPERS = (
    ("flag_names(event, field, value)",
     "the text trace-cmd report prints for a field its event's print format decodes with __print_flags or "
     "__print_symbolic: `flag_names('writeback_single_inode', 'state', 131200)` = `I_SYNC|0x20000` (bits the "
     "format does not name in hex), `flag_names('btrfs_flush_space', 'flags', 4)` = `METADATA`, "
     "`flag_names('writeback_start', 'reason', 2)` = `sync`; NULL when the format names no values for the field"),
    ("sym(event, field, value)",
     "an enum value's name from the print format (`sym('btrfs_flush_space', 'state', 5)` = `FLUSH_DELALLOC`), "
     "the value itself when unnamed: for comparing names, which stay when kernels renumber"),
    ("num(value)", "the number of a field a text capture prints with its name: `num('3(FLUSH_DELAYED_REFS_NR)')` = 3"),
    ("page_bytes()", "the capture's page size in bytes (4096 when it does not record one)"),
)


def create(con) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP MACRO page_bytes() AS "
        "(SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 4096) FROM trace_info WHERE key = 'page_size')"
    )
    tables = _value_names(con)
    rows = [(event, t.field, str(value), name) for (event, _), t in tables.items() if t.kind == "symbolic" for value, name in t.entries]
    # Four lists zipped by unnest: one statement, and no pyarrow for a query on a cached store.
    con.execute(
        "CREATE OR REPLACE TEMP TABLE symbols AS SELECT unnest($1::VARCHAR[]) AS event, unnest($2::VARCHAR[]) AS field, "
        "unnest($3::VARCHAR[]) AS value, unnest($4::VARCHAR[]) AS name",
        [[r[i] for r in rows] for i in range(4)],
    )
    _flag_names_function(con, tables)
    # Text captures already print the name: "reason=sync" is returned as is. btrfs prints
    # both, "state=3(FLUSH_DELAYED_REFS_NR)": num() reads the 3, sym() the name.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO num(v) AS "
        "TRY_CAST(regexp_extract(v::VARCHAR, '^\\s*(-?[0-9]+)', 1) AS BIGINT)"
    )
    con.execute(
        "CREATE OR REPLACE TEMP MACRO sym(ev, fld, v) AS coalesce("
        "(SELECT any_value(s.name) FROM symbols s WHERE s.event = ev AND s.field = fld AND s.value = v::VARCHAR), "
        "nullif(regexp_extract(v::VARCHAR, '^-?[0-9]+\\((.*)\\)$', 1), ''), v::VARCHAR)"
    )
    con.execute("CREATE OR REPLACE TEMP MACRO flag_names(ev, fld, v) AS _flag_names(ev::VARCHAR, fld::VARCHAR, v::VARCHAR)")


def _value_names(con) -> dict[tuple[str, str], ValueNames]:
    """(event, field) → its table. A field printed by two tables (btrfs_flush_space's
    `flags=%llu(%s)` is one) keeps the first."""
    out: dict[tuple[str, str], ValueNames] = {}
    try:
        formats = con.execute("SELECT event, print_fmt FROM event_formats WHERE print_fmt LIKE '%\\_\\_print\\_%' ESCAPE '\\'").fetchall()
    except Exception:  # noqa: BLE001 -- a store without formats (blktrace only): nothing to name
        formats = []
    for event, fmt in formats:
        for t in value_names(fmt or ""):
            out.setdefault((event, t.field), t)
    return out


def _flag_names_function(con, tables: dict[tuple[str, str], ValueNames]) -> None:
    """flag_names(event, field, value): the text trace-cmd prints for the value, from the
    capture's own print format (I_DIRTY_PAGES|I_SYNC|0x20000, METADATA, background); a
    name a text capture printed comes back as is; NULL when the format names no values."""

    @functools.lru_cache(maxsize=4096)
    def decode(event: str | None, field: str | None, value: str | None) -> str | None:
        if value is None:
            return None
        t = tables.get((event, field))
        number = _NUMBER.fullmatch(value.strip())
        if number is None:
            printed = _PRINTED.fullmatch(value.strip())  # btrfs text: flags=4(METADATA)
            return printed.group(1) if printed else value
        if t is None:
            return None
        return t.name(int(number.group(0)))

    with contextlib.suppress(Exception):
        con.remove_function("_flag_names")
    con.create_function("_flag_names", decode, [sqltypes.VARCHAR] * 3, sqltypes.VARCHAR, null_handling="special", side_effects=False)


_NUMBER = re.compile(r"-?\d+")
_PRINTED = re.compile(r"-?\d+\((.*)\)")
