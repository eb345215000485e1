"""SQL helpers every view, rule and replay query may use.

page_bytes(): the capture's page size (trace.dat records it; 4096 otherwise).
sym(event, field, value): the name an event's print format gives an enum value.
num(value): the number of a field that text captures print with its name, 3(FLUSH_DELALLOC).
`__print_symbolic(REC->reason, {0, "background"}, {1, "vmscan"}, {2, "sync"}, ...)` in a
print_fmt: the names trace-cmd prints for an enum field. Numbers differ between kernels
(btrfs_flush_space's FLUSH_DELALLOC is 5 in 5.10 and in 6.18, ALLOC_CHUNK moved from 7 to
8 when FLUSH_DELALLOC_FULL came), so queries compare names, via sym().
"""

from __future__ import annotations

import re

import pyarrow as pa

_SYMBOLIC_RE = re.compile(r"__print_symbolic\(\s*REC->(\w+)\s*,((?:\s*\{\s*-?\w+\s*,\s*\"[^\"]*\"\s*\}\s*,?)+)\)")
_PAIR_RE = re.compile(r"\{\s*(-?\w+)\s*,\s*\"([^\"]*)\"\s*\}")


def create(con) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP MACRO page_bytes() AS "
        "(SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 4096) FROM trace_info WHERE key = 'page_size')"
    )
    rows = []
    for event, fmt in con.execute("SELECT event, print_fmt FROM event_formats WHERE print_fmt LIKE '%__print_symbolic%'").fetchall():
        for field_name, pairs in _SYMBOLIC_RE.findall(fmt):
            for value, name in _PAIR_RE.findall(pairs):
                try:
                    rows.append((event, field_name, str(int(value, 0)), name))
                except ValueError:
                    continue  # an enum name the kernel did not resolve to a number
    table = pa.table({k: pa.array([r[i] for r in rows], pa.string()) for i, k in enumerate(("event", "field", "value", "name"))})
    con.register("_symbols_rows", table)
    con.execute("CREATE OR REPLACE TEMP TABLE symbols AS SELECT * FROM _symbols_rows")
    con.unregister("_symbols_rows")
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
