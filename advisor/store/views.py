"""The user-facing views over the decoded tables.

For each event type a view `<table>` in the main schema lists the common
columns (id, ts, cpu, pid, tgid, comm, flags, preempt_count) then every
field of the event. Columns the capture stores per event are passed
through; `comm` and `tgid` of trace.dat captures come from `tasks`
(saved_cmdlines: the last name the kernel saw for each pid). `events` is
the union of every non-empty event table's common columns.

No view orders its rows: ask for `ORDER BY ts, id` (capture order; the id
column is `common_id` in an event with a field `id`, e.g. sys_enter). With an
ORDER BY in the view, DuckDB sorts every row before any query over it, an
aggregate too, and keeps the sorted rows in memory: on 15.6 M events,
`advisor sql` with `SELECT event, count(*) FROM events GROUP BY event` took
1.72 s and 1.1 GiB that way, 0.69 s and 145 MiB without (medians of 3). With
a LIMIT, `ORDER BY ts, id LIMIT n` is a top-n over one pass. The stored rows
are in capture order, but the join with `tasks` hands on the rows of a pid
that is not in it after the others of their batch (273 of 2.76 M rows out of
order on that capture), and `events` is one event table after the other.
"""

from __future__ import annotations

from advisor.store.ddl import Columns, ident, literal

COMMON = ("id", "ts", "cpu", "pid", "tgid", "comm", "flags", "preempt_count")
_NULL_TYPES = {"tgid": "INTEGER", "comm": "VARCHAR"}


def _common(spec: dict, alias: str) -> dict[str, str | None]:
    """role → expression over the raw table, None where `tasks` supplies it."""
    physical = set(spec["physical_common"])
    return {
        role: f"{alias}.{ident(name)}" if name in physical else None
        for role, name in zip(COMMON, spec["common_names"])
    }


def _event_view(name: str, spec: dict, columns: Columns) -> str:
    common = _common(spec, "r")
    cols = []
    for role, out_name in zip(COMMON, spec["common_names"]):
        expr = common[role] or (f"t.{role}" if role in _NULL_TYPES else "NULL")
        cols.append(f"{expr} AS {ident(out_name)}")
    physical = set(spec["physical_common"])
    cols += [f"r.{ident(c)}" for c, _type in columns if c not in physical]
    return (
        f"CREATE VIEW {ident(name)} AS SELECT {', '.join(cols)} FROM raw.{ident(name)} r"
        f" LEFT JOIN tasks t ON t.pid = {common['pid']};"
    )


def _empty_event_view(name: str, spec: dict, columns: Columns) -> str:
    """The view of an event type recorded but never seen: no stored table (sink.py),
    the same columns with the same types as _event_view gives, and no rows. Constants,
    not _event_view over an empty relation joined with `tasks`: on the `-e all` sample
    (2,025 such views) that join made the ingest take 4.0-4.4 s instead of 2.9-3.1 s."""
    types = dict(columns)
    physical = set(spec["physical_common"])
    cols = []
    for role, out_name in zip(COMMON, spec["common_names"]):
        if out_name in physical:
            cols.append(f"NULL::{types[out_name]} AS {ident(out_name)}")
        else:
            cols.append(f"NULL::{_NULL_TYPES[role]} AS {ident(out_name)}" if role in _NULL_TYPES else f"NULL AS {ident(out_name)}")
    cols += [f"NULL::{sql_type} AS {ident(c)}" for c, sql_type in columns if c not in physical]
    return f"CREATE VIEW {ident(name)} AS SELECT {', '.join(cols)} WHERE false;"


def _union_branch(name: str, spec: dict) -> str:
    common = _common(spec, "r")
    sel = []
    for role in COMMON:
        expr = common[role] or f"NULL::{_NULL_TYPES.get(role, 'UTINYINT')}"
        sel.append(f"{expr} AS {role}")
    sel.insert(6, f"{literal(spec['system'])} AS system")
    sel.insert(7, f"{literal(spec['event'])} AS event")
    return f"SELECT {', '.join(sel)} FROM raw.{ident(name)} r"


def create(con, specs: list[dict], schemas: dict[str, Columns], rows: dict[str, int]) -> None:
    by_name = {s["name"]: s for s in specs}
    statements = []
    union = []
    for name, schema in schemas.items():
        spec = by_name.get(name) or _text_spec(name, schema)
        if rows.get(name):
            statements.append(_event_view(name, spec, schema))
            union.append(_union_branch(name, spec))
        else:
            statements.append(_empty_event_view(name, spec, schema))
    if union:
        statements.append(
            "CREATE VIEW events AS SELECT u.id, u.ts, u.cpu, u.pid, COALESCE(u.tgid, t.tgid) AS tgid,"
            " COALESCE(u.comm, t.comm) AS comm, u.system, u.event, u.flags, u.preempt_count FROM ("
            + "\nUNION ALL ".join(union)
            + ") u LEFT JOIN tasks t ON t.pid = u.pid;"
        )
    else:
        statements.append(
            "CREATE VIEW events AS SELECT NULL::UBIGINT AS id, NULL::BIGINT AS ts, NULL::INTEGER AS cpu,"
            " NULL::INTEGER AS pid, NULL::INTEGER AS tgid, NULL::VARCHAR AS comm, NULL::VARCHAR AS system,"
            " NULL::VARCHAR AS event, NULL::UTINYINT AS flags, NULL::UTINYINT AS preempt_count WHERE false;"
        )
    con.execute("\n".join(statements))


def _text_spec(name: str, columns: Columns) -> dict:
    present = {c for c, _type in columns}
    return {
        "name": name,
        "system": "",
        "event": name,
        "common_names": list(COMMON),
        "physical_common": [c for c in COMMON if c in present],
    }
