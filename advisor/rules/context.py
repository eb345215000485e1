"""The SQL a rule's queries run against: one temporary view per event role and
per syscall span, whatever names this capture's kernel gave the events.

Kernels renamed tracepoints (5.16: `writeback_dirty_page` → `writeback_dirty_folio`,
`wait_on_page_writeback` → `folio_wait_writeback`; 6.x: btrfs `__extent_writepage`
→ `extent_writepage`). A rule lists every name of a role; `ev_<role>` is the union
(by column name) of those this capture recorded, so the rule's SQL is written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from advisor.rules.model import EventRole, Rule, Span
from advisor.store.ddl import ident

# Columns every event view has (advisor/store/views.py); an empty role view has these.
COMMON_COLUMNS = "NULL::UBIGINT AS id, NULL::BIGINT AS ts, NULL::INTEGER AS cpu, NULL::INTEGER AS pid, NULL::VARCHAR AS comm"


@dataclass
class Present:
    """Which events the capture recorded: "system:event" → (table, rows)."""

    tables: dict[str, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, con) -> "Present":
        rows = con.execute("SELECT system, event, table_name, events FROM event_formats").fetchall()
        out = cls()
        for system, event, table, n in rows:
            # Text captures may not name the system; such events match by name alone.
            out.tables[f"{system or '*'}:{event}"] = (table, int(n or 0))
        return out

    def find(self, name: str) -> tuple[str, int] | None:
        system, event = name.split(":")
        return self.tables.get(f"{system}:{event}") or self.tables.get(f"*:{event}")

    def recorded(self, name: str) -> bool:
        """Was the event enabled? trace.dat files embed the format of exactly the
        events that were enabled, so a format with zero rows means "enabled, never
        fired" (e.g. vmscan events without memory pressure). Text captures only
        show events that fired."""
        return self.find(name) is not None


@dataclass
class Context:
    """Views created for one rule, and which required events the capture lacks."""

    missing: list[str] = field(default_factory=list)  # human descriptions
    missing_events: list[str] = field(default_factory=list)  # system:event names
    used: dict[str, list[str]] = field(default_factory=dict)  # role → names found


def prepare(con, rule: Rule, present: Present | None = None) -> Context:
    present = present or Present.of(con)
    ctx = Context()
    create_macros(con)
    for role in rule.events:
        _role_view(con, role, present, ctx)
    for span in rule.spans:
        span_view(con, span, present, ctx)
    return ctx


def create_macros(con) -> None:
    """page_bytes() and sym(event, field, value), for rule and replay SQL."""
    con.execute(
        "CREATE OR REPLACE TEMP MACRO page_bytes() AS "
        "(SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 4096) FROM trace_info WHERE key = 'page_size')"
    )
    _symbols(con)


# `__print_symbolic(REC->reason, {0, "background"}, {1, "vmscan"}, {2, "sync"}, ...)` in a
# print_fmt: the names trace-cmd prints for an enum field. Numbers differ between kernels
# (btrfs_flush_space's FLUSH_DELALLOC is 5 in 5.10 and in 6.18, ALLOC_CHUNK moved from 7 to
# 8 when FLUSH_DELALLOC_FULL came), so rules compare names, via sym(event, field, value).
_SYMBOLIC_RE = re.compile(r"__print_symbolic\(\s*REC->(\w+)\s*,((?:\s*\{\s*-?\w+\s*,\s*\"[^\"]*\"\s*\}\s*,?)+)\)")
_PAIR_RE = re.compile(r"\{\s*(-?\w+)\s*,\s*\"([^\"]*)\"\s*\}")


def _symbols(con) -> None:
    rows = []
    for event, fmt in con.execute("SELECT event, print_fmt FROM event_formats WHERE print_fmt LIKE '%__print_symbolic%'").fetchall():
        for field_name, pairs in _SYMBOLIC_RE.findall(fmt):
            for value, name in _PAIR_RE.findall(pairs):
                try:
                    rows.append((event, field_name, str(int(value, 0)), name))
                except ValueError:
                    continue  # an enum name the kernel did not resolve to a number
    con.execute("CREATE OR REPLACE TEMP TABLE symbols (event VARCHAR, field VARCHAR, value VARCHAR, name VARCHAR)")
    if rows:
        con.executemany("INSERT INTO symbols VALUES (?, ?, ?, ?)", rows)
    # Text captures already print the name ("reason=sync"): then the value is returned as is.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO sym(ev, fld, v) AS coalesce("
        "(SELECT any_value(s.name) FROM symbols s WHERE s.event = ev AND s.field = fld AND s.value = v::VARCHAR), v::VARCHAR)"
    )


def _role_view(con, role: EventRole, present: Present, ctx: Context) -> None:
    found = [present.find(n)[0] for n in role.names if present.recorded(n)]
    ctx.used[role.role] = [n for n in role.names if present.recorded(n)]
    view = ident(f"ev_{role.role}")
    if found:
        body = " UNION ALL BY NAME ".join(f"SELECT * FROM {ident(t)}" for t in found)
    else:
        if role.required:
            ctx.missing.append(f"{' or '.join(role.names)} ({role.why})")
            ctx.missing_events.append(role.names[0])
        # An existing but empty table keeps the real columns; otherwise only the common ones.
        existing = [present.find(n)[0] for n in role.names if present.find(n)]
        declared = "".join(f", NULL::{kind} AS {ident(name)}" for name, kind in role.columns)
        body = f"SELECT * FROM {ident(existing[0])} WHERE false" if existing else f"SELECT {COMMON_COLUMNS}{declared} WHERE false"
    con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {body}")


def span_view(con, span: Span, present: Present, ctx: Context) -> None:
    """`<name>_spans`: one row per syscall enter, paired with its exit.

    The exit is the first sys_exit of the same pid and syscall at or after the
    enter (a task is in one syscall at a time). If the capture lost the exit and
    the task entered the same syscall again first, the span stays open (end_ts
    NULL) rather than borrowing the later exit. Spans still running when the
    capture ended are open too: their duration is unknown, not zero.
    """
    enters, exits = [], []
    for sc in span.syscalls:
        e, x = f"syscalls:sys_enter_{sc}", f"syscalls:sys_exit_{sc}"
        if present.recorded(e):
            where = f" WHERE {span.where}" if span.where else ""
            enters.append(f"SELECT *, '{sc}' AS syscall FROM {ident(present.find(e)[0])}{where}")
        if present.recorded(x):
            exits.append(f"SELECT id, ts, pid, ret, '{sc}' AS syscall FROM {ident(present.find(x)[0])}")
    view = ident(f"{span.name}_spans")
    if not enters or not exits:
        if span.required:
            names = " or ".join(span.syscalls)
            ctx.missing.append(f"syscalls:sys_enter_*/sys_exit_* of {names} ({span.why})")
            ctx.missing_events.append(f"syscalls:sys_enter_{span.syscalls[0]}")
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT NULL::INTEGER AS pid, NULL::VARCHAR AS comm, NULL::VARCHAR AS syscall,"
            " NULL::BIGINT AS start_ts, NULL::BIGINT AS end_ts, NULL::BIGINT AS dur_ns, NULL::BIGINT AS ret, NULL::BOOLEAN AS complete WHERE false"
        )
        return
    ctx.used[span.name] = list(span.syscalls)
    # Each enter takes the next event of its task and syscall, in capture order: an exit
    # completes it, another enter means its exit was lost. Capture order is (ts, id): where
    # the trace clock does not advance between two events (an emulated CPU's clock often
    # doesn't), an exit and the task's next enter share a timestamp, and the ring buffer's
    # order (id) tells them apart.
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW {view} AS
        WITH e AS ({" UNION ALL BY NAME ".join(enters)}),
             x AS ({" UNION ALL ".join(exits)}),
             seq AS (SELECT id, ts, pid, syscall, false AS is_exit, NULL::BIGINT AS ret FROM e
                     UNION ALL SELECT id, ts, pid, syscall, true, ret FROM x),
             nxt AS (SELECT id, ts, pid, syscall, is_exit,
                            lead(is_exit) OVER w AS next_is_exit, lead(ts) OVER w AS next_ts, lead(ret) OVER w AS next_ret
                     FROM seq WINDOW w AS (PARTITION BY pid, syscall ORDER BY ts, id, is_exit))
        SELECT e.* EXCLUDE (ts),
               e.ts AS start_ts,
               CASE WHEN n.next_is_exit THEN n.next_ts END AS end_ts,
               CASE WHEN n.next_is_exit THEN n.next_ts - e.ts END AS dur_ns,
               CASE WHEN n.next_is_exit THEN n.next_ret END AS ret,
               coalesce(n.next_is_exit, false) AS complete
        FROM e JOIN nxt n ON NOT n.is_exit AND n.id = e.id AND n.ts = e.ts AND n.pid = e.pid AND n.syscall = e.syscall"""
    )
