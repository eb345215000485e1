"""Syscalls from enter to exit, as one row each: the operations users wait on.

Each enter takes the next event of its task and syscall, in capture order: an exit
completes it, another enter means its exit was lost. If the capture lost the exit and
the task entered the same syscall again first, the span stays open (end_ts NULL)
rather than borrowing the later exit; spans still running when the capture ended are
open too: their duration is unknown, not zero.

Capture order is (ts, id): where the trace clock does not advance between two events
(an emulated CPU's clock often doesn't), an exit and the task's next enter share a
timestamp, and the ring buffer's order (id) tells them apart.

A trace.dat's syscalls are paired this way by the parser while it reads the capture
(`raw.syscall_spans`), holding only the calls still open; text captures are paired
here, in one SQL window over their enters and exits (which holds all of them: 0.7 GiB
for the 5.2 M events of 2.6 M write(2) calls).
"""

from __future__ import annotations

import re

from advisor.store.ddl import ident
from advisor.views import raw_syscalls
from advisor.views.model import Column, Source
from advisor.views.present import Present

SPAN_COLUMNS = (
    Column("pid", "INTEGER", "the calling task"),
    Column("tgid", "INTEGER", "its process (thread group)"),
    Column("comm", "VARCHAR", "the task's name"),
    Column("syscall", "VARCHAR", "which call (fsync, fdatasync, ...)"),
    Column("start_ts", "BIGINT", "entry, ns on the capture's clock"),
    Column("end_ts", "BIGINT", "return, ns; NULL when the capture did not see it"),
    Column("dur_ns", "BIGINT", "end_ts - start_ts, ns; NULL when open"),
    Column("ret", "BIGINT", "return value (negative: -errno)"),
    Column("complete", "BOOLEAN", "the return was seen"),
)


def syscall_events(syscalls: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The source's event groups: each call's own enter (exit) events, else raw_syscalls'."""
    return (tuple(f"syscalls:sys_enter_{s}" for s in syscalls) + (raw_syscalls.ENTER,),
            tuple(f"syscalls:sys_exit_{s}" for s in syscalls) + (raw_syscalls.EXIT,))


def span_sql(syscalls: tuple[str, ...], present: Present, where: str | None = None, extra: tuple[str, ...] = ()) -> str:
    """The spans of every syscall of `syscalls` whose enter and exit were both recorded,
    as its own events, else as raw_syscalls (by number: advisor.views.raw_syscalls);
    `where` filters the enter events' fields; `extra`: enter fields to keep (NULL when a
    syscall's enter event lacks them)."""
    named = [sc for sc, _, _ in _recorded(syscalls, present)]
    raw = [sc for sc in syscalls if sc not in named] if _raw_usable(present) else []
    sql = _paired_sql(syscalls, present, where, extra) if present.paired_syscalls else _window_sql(syscalls, present, where, extra)
    if raw:
        # Calls without their own events recorded, from raw_syscalls (by number).
        raw_sql = _raw_sql(raw, present, where, extra)
        sql = raw_sql if not named else f"({sql}) UNION ALL BY NAME ({raw_sql})"
    return _open_across_losses(sql) if present.lost_markers else sql


def _open_across_losses(sql: str) -> str:
    """A span with a lost-events marker between its enter and its exit stays open: the
    kernel dropped events there, maybe this call's exit and the next call's enter, so
    the exit that follows may be another call's. With `-b 16` under fio, a pwrite64 whose
    exit was lost took a later call's exit and "lasted" 1.97 ms, with a dropped fsync's
    page waits inside it. A marker carries the time of the first event after its gap on
    its CPU, so a gap that ends after the exit recorded on another CPU is not seen."""
    return f"""
        WITH spans AS ({sql})
        SELECT s.* REPLACE (
            CASE WHEN s.complete AND l.crossed IS NULL THEN s.end_ts END AS end_ts,
            CASE WHEN s.complete AND l.crossed IS NULL THEN s.dur_ns END AS dur_ns,
            CASE WHEN s.complete AND l.crossed IS NULL THEN s.ret END AS ret,
            s.complete AND l.crossed IS NULL AS complete)
        FROM spans s LEFT JOIN (
            SELECT DISTINCT s2.pid, s2.syscall, s2.start_ts, true AS crossed FROM spans s2 JOIN lost_events m
            ON m.ts > s2.start_ts AND m.ts <= s2.end_ts) l
        ON l.pid = s.pid AND l.syscall = s.syscall AND l.start_ts = s.start_ts"""


def _window_sql(syscalls: tuple[str, ...], present: Present, where: str | None, extra: tuple[str, ...]) -> str:
    enters, exits = [], []
    for sc, e, x in _recorded(syscalls, present):
        have = present.columns.get(e[0], set())
        if where and not _fields_of(where) <= have:
            continue
        fields = "".join(f", {ident(f)}" if f in have else f", NULL AS {ident(f)}" for f in extra)
        flt = f" WHERE {where}" if where else ""
        enters.append(f"SELECT id, ts, pid, tgid, comm, '{sc}' AS syscall{fields}, false AS is_exit, NULL::BIGINT AS ret "
                      f"FROM {ident(e[0])}{flt}")
        ret = "ret" if "ret" in present.columns.get(x[0], set()) else "NULL::BIGINT"
        nulls = "".join(", NULL" for _ in extra)
        exits.append(f"SELECT id, ts, pid, NULL, NULL, '{sc}'{nulls}, true, {ret} FROM {ident(x[0])}")
    if not enters:  # enters of one syscall and exits of another only
        return _no_spans(extra)
    return _pair_in_window(enters, exits, extra)


def _raw_sql(syscalls: list[str], present: Present, where: str | None, extra: tuple[str, ...]) -> str:
    """The spans of `syscalls` from raw_syscalls:sys_enter/sys_exit, by their numbers on
    the capture's architecture: a trace.dat's as the parser paired them (`raw.syscall_spans`,
    syscall "#74"), a text capture's paired here as `_window_sql` pairs the calls' own
    events. `where` and `extra` name the calls' own fields (cmd, fd, count): each is read
    from its register."""
    paired = present.paired_syscalls
    numbered = {sc: raw_syscalls.number(present.arch, sc) for sc in syscalls}
    numbered = {sc: n for sc, n in numbered.items() if n is not None}
    call = "s.syscall" if paired else "id"
    key = (lambda n: f"'{raw_syscalls.paired_name(n)}'") if paired else str
    conds, names = [], _fields_of(where) if where else set()
    for sc, n in numbered.items():
        cond = f"{call} = {key(n)}"
        if where:
            if any(raw_syscalls.arg(sc, f) is None for f in names):
                continue
            cond += " AND (" + re.sub(r"[a-z_][a-z0-9_]*", lambda m: raw_syscalls.arg(sc, m[0], paired) if m[0] in names else m[0], where) + ")"
        conds.append(f"({cond})")
    if not conds:
        return _no_spans(extra)
    name = f"CASE {call} " + " ".join(f"WHEN {key(n)} THEN '{sc}'" for sc, n in numbered.items()) + " END"

    def arg_column(field: str) -> str:
        whens = [f"WHEN {key(n)} THEN {raw_syscalls.arg(sc, field, paired)}" for sc, n in numbered.items() if raw_syscalls.arg(sc, field)]
        return f", CASE {call} {' '.join(whens)} END AS {ident(field)}" if whens else f", NULL::BIGINT AS {ident(field)}"
    fields = "".join(arg_column(f) for f in extra)
    if paired:
        return f"""
            SELECT s.pid, coalesce(s.tgid, t.tgid) AS tgid, t.comm, {name} AS syscall, s.start_ts, s.end_ts,
                   s.end_ts - s.start_ts AS dur_ns, s.ret, s.end_ts IS NOT NULL AS complete{fields}
            FROM raw.syscall_spans s LEFT JOIN tasks t ON t.pid = s.pid
            WHERE {" OR ".join(conds)}"""
    enter, exit_ = (present.find(e)[0] for e in raw_syscalls.EVENTS)
    have = present.columns.get(enter, set())
    tgid = "tgid" if "tgid" in have else "NULL::INTEGER"
    comm = "comm" if "comm" in have else "NULL::VARCHAR"
    order = raw_syscalls.ORDER
    enters = [f"SELECT {order} AS id, ts, pid, {tgid} AS tgid, {comm} AS comm, {name} AS syscall{fields}, false AS is_exit, "
              f"NULL::BIGINT AS ret FROM {ident(enter)} WHERE {' OR '.join(conds)}"]
    nulls = "".join(", NULL" for _ in extra)
    exits = [f"SELECT {order}, ts, pid, NULL, NULL, {name}{nulls}, true, ret FROM {ident(exit_)} "
             f"WHERE id IN ({', '.join(str(n) for n in numbered.values())})"]
    return _pair_in_window(enters, exits, extra)


def _raw_usable(present: Present) -> bool:
    return (present.arch is not None and present.has_fields(raw_syscalls.ENTER, raw_syscalls.ENTER_FIELDS)
            and present.has_fields(raw_syscalls.EXIT, raw_syscalls.EXIT_FIELDS))


def _pair_in_window(enters: list[str], exits: list[str], extra: tuple[str, ...]) -> str:
    keep = "".join(f", {ident(f)}" for f in extra)
    # One pass: enters and exits in one window, each enter carrying its own columns
    # (an exit's are NULL), so no enter is joined back to its row afterwards. Counting
    # the spans of 2.6 M writes peaked at 1.0 GiB with that join, 0.70 GiB without.
    return f"""
        WITH seq AS ({" UNION ALL ".join(enters + exits)}),
             nxt AS (SELECT *, lead(is_exit) OVER w AS next_is_exit, lead(ts) OVER w AS next_ts, lead(ret) OVER w AS next_ret
                     FROM seq WINDOW w AS (PARTITION BY pid, syscall ORDER BY ts, id, is_exit))
        SELECT pid, tgid, comm, syscall, ts AS start_ts,
               CASE WHEN next_is_exit THEN next_ts END AS end_ts,
               CASE WHEN next_is_exit THEN next_ts - ts END AS dur_ns,
               CASE WHEN next_is_exit THEN next_ret END AS ret,
               coalesce(next_is_exit, false) AS complete{keep}
        FROM nxt WHERE NOT is_exit"""


def _paired_sql(syscalls: tuple[str, ...], present: Present, where: str | None, extra: tuple[str, ...]) -> str:
    """The same spans from the pairs the parser made while reading the capture
    (`raw.syscall_spans`, parsers/src/tracedat/spans.rs: the same rule, in capture
    order, holding only the calls still open), so no query holds every enter and exit.
    The enter's fields are its arguments by position: sys_enter_write's format lists
    fd, buf, count, so count is arg2."""
    branches, columns = [], {f: [] for f in extra}
    for sc, _, _ in _recorded(syscalls, present):
        args = present.syscall_args.get(f"syscalls:sys_enter_{sc}", [])
        if where and not _fields_of(where) <= set(args):
            continue
        cond = f"s.syscall = '{sc}'"
        if where:
            cond += " AND (" + re.sub(r"[a-z_][a-z0-9_]*", lambda m: f"s.arg{args.index(m[0])}" if m[0] in args else m[0], where) + ")"
        branches.append(f"({cond})")
        for f in extra:
            if f in args:
                columns[f].append(f"WHEN '{sc}' THEN s.arg{args.index(f)}")
    if not branches:
        return _no_spans(extra)
    fields = "".join(f", CASE s.syscall {' '.join(w)} END AS {ident(f)}" if w else f", NULL::BIGINT AS {ident(f)}"
                     for f, w in columns.items())
    return f"""
        SELECT s.pid, coalesce(s.tgid, t.tgid) AS tgid, t.comm, s.syscall, s.start_ts, s.end_ts, s.end_ts - s.start_ts AS dur_ns,
               s.ret, s.end_ts IS NOT NULL AS complete{fields}
        FROM raw.syscall_spans s LEFT JOIN tasks t ON t.pid = s.pid
        WHERE {" OR ".join(branches)}"""


def _recorded(syscalls: tuple[str, ...], present: Present):
    """(syscall, its enter's (table, rows), its exit's) for each syscall whose enter and
    exit were both recorded."""
    for sc in syscalls:
        e, x = present.find(f"syscalls:sys_enter_{sc}"), present.find(f"syscalls:sys_exit_{sc}")
        if e is not None and x is not None:
            yield sc, e, x


def _no_spans(extra: tuple[str, ...]) -> str:
    cols = [f"NULL::{c.type} AS {c.name}" for c in SPAN_COLUMNS] + [f"NULL AS {ident(f)}" for f in extra]
    return f"SELECT {', '.join(cols)} WHERE false"


def _fields_of(where: str) -> set[str]:
    """The field names a simple filter reads: "cmd IN (1, 2)" → {"cmd"}."""
    return {w for w in re.findall(r"[a-z_][a-z0-9_]*", where) if w not in {"in", "and", "or", "not", "is", "null"}}


def syscall_source(syscalls: tuple[str, ...], where: str | None = None, extra: tuple[str, ...] = (),
                   lacks: str = "", fields: tuple[str, ...] = ()) -> Source:
    """A view's source: these syscalls' enter/exit tracepoints."""
    return Source(
        label="syscalls " + "/".join(syscalls),
        events=syscall_events(syscalls),
        fields=(fields, ()) if fields else (),
        sql=lambda tables, present: span_sql(syscalls, present, where, extra),
        lacks=lacks,
        recording=tuple(e for s in syscalls for e in (f"syscalls:sys_enter_{s}", f"syscalls:sys_exit_{s}")),
    )
