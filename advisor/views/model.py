"""What a domain view is: typed columns, filled from one of several event sources.

A view (`fsync_ops`, `dirtying`, `reclaim` …) is the one place that knows which events
can show a domain object, under every name kernels gave them. Its sources are listed
best first; the first one the capture recorded fills the view (or, for a view that
`combines`, every one it recorded, as `reclaim` adds memcg reclaim to direct reclaim).
A source may fill only some columns (the rest are NULL) and says in words what it
cannot show, so that whoever reads the view knows what a NULL means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from advisor.store.ddl import ident
from advisor.views import raw_syscalls
from advisor.views.present import Present


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB type
    text: str  # what it holds, with its unit


@dataclass(frozen=True)
class Table:
    """An event's table as a source's SQL sees it: `str(t)` is its quoted identifier,
    `t.opt(field, alias)` selects a field the capture may not have kept (NULL then)."""

    name: str
    columns: frozenset[str]
    event: str = ""  # the event ("system:event") it holds

    def __str__(self) -> str:
        return ident(self.name)

    def has(self, *fields: str) -> bool:
        return set(fields) <= self.columns

    def opt(self, field: str, alias: str | None = None, type_: str = "VARCHAR") -> str:
        return self.first(alias or field, type_, field)

    def first(self, alias: str, type_: str, *fields: str) -> str:
        """The first of `fields` the table has, as `alias` (NULL when none): print formats
        name some fields differently from the struct (writeback_single_inode prints
        writeback_index as "index="), and text captures keep the printed name."""
        have = next((f for f in fields if f in self.columns), None)
        return f"{ident(have)} AS {ident(alias)}" if have else f"NULL::{type_} AS {ident(alias)}"


@dataclass(frozen=True)
class Source:
    """One way to fill a view. `events`: groups of alternative names (kernel renames,
    newest first), every group needed; `fields`: per group, the columns its table must
    have (a text capture may lack them). `sql(tables, present)` gets one Table per group
    and returns a SELECT naming the view's columns it fills. `optional`: view columns
    filled only when the first group's table has the field (view column, "field" or
    "field|printed_name"), or when another event was recorded ("@system:event|...")."""

    label: str
    events: tuple[tuple[str, ...], ...]
    sql: Callable[[list[Table], Present], str]
    fields: tuple[tuple[str, ...], ...] = ()
    provides: tuple[str, ...] | None = None  # columns filled; None: all of the view's
    lacks: str = ""  # what this source cannot show
    recording: tuple[str, ...] = ()  # events to record for it, when not one per group
    tables: tuple[str, ...] = ()  # store tables it reads besides events (blktrace's io_requests)
    optional: tuple[tuple[str, str], ...] = ()
    # In a combining view, sources of one `kind` are alternatives: the first usable one counts.
    kind: str = ""

    def resolve(self, present: Present) -> tuple[list[Table] | None, str]:
        """Table per group, or None and why the source is not usable here."""
        for t in self.tables:
            if t not in present.columns:
                return None, f"no {t} in the store (blktrace records)"
        tables = []
        for i, group in enumerate(self.events):
            name = next((n for n in group if present.recorded(n)), None)
            if name is None:
                if present.text_capture:  # a text has a line per event, none for an enabled event that never fired
                    return None, f"no {' or '.join(group)} in the text (a text capture shows only the events that fired)"
                return None, f"{' or '.join(group)} not recorded"
            need = self.fields[i] if i < len(self.fields) else ()
            if name in raw_syscalls.EVENTS:
                # The calls by number (every call of every task): the view's SQL names them.
                need = raw_syscalls.ENTER_FIELDS if name == raw_syscalls.ENTER else raw_syscalls.EXIT_FIELDS
                why = raw_syscalls.unusable(present.arch, present.uname)
                if why:
                    return None, why
            if need and not present.has_fields(name, need):
                return None, (f"{name} is recorded without its fields {', '.join(need)} "
                              "(a text capture keeps only the fields its lines print as key=value, by position or as `dev 7,0 ino 12` pairs)")
            table = present.find(name)[0]
            tables.append(Table(table, frozenset(present.columns.get(table, ())), name))
        return tables, ""

    def fills(self, column: str, tables: list[Table], present: Present) -> bool:
        if self.provides is not None and column not in self.provides:
            return False
        spec = dict(self.optional).get(column)
        if spec is None:
            return True
        if spec.startswith("@"):  # "@system:event|system:event": filled when one was recorded
            return any(present.recorded(e) for e in spec[1:].split("|"))
        return bool(tables) and any(tables[0].has(f) for f in spec.split("|"))  # "a|b": either field

    def record(self) -> list[str]:
        """The events to record for this source (by default the newest name of each group)."""
        return list(self.recording) or [group[0] for group in self.events]


@dataclass(frozen=True)
class View:
    name: str
    text: str
    columns: tuple[Column, ...]
    sources: tuple[Source, ...]
    combines: bool = False  # union every recorded source instead of taking the first

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass
class Built:
    """A view as this capture fills it."""

    view: View
    present: Present
    used: list[tuple[Source, list[Table]]] = field(default_factory=list)
    skipped: list[tuple[Source, str]] = field(default_factory=list)  # sources not usable here, and why

    @property
    def available(self) -> bool:
        return bool(self.used)

    @property
    def timed_by_events(self) -> bool:
        """Rows come from trace events (trace.dat or ftrace text), not blktrace tables."""
        return any(s.events for s, _ in self.used)

    def fills(self, column: str) -> bool:
        return self.view.column(column) is not None and any(s.fills(column, tables, self.present) for s, tables in self.used)

    @property
    def source(self) -> str:
        if not self.used:
            return "none"
        return " + ".join(s.label + (" (raw_syscalls)" if _by_number(tables) else "") for s, tables in self.used)

    @property
    def lacks(self) -> str:
        """What the capture cannot show through this view, in words."""
        if not self.used:
            return "; ".join(dict.fromkeys(why for _, why in self.skipped))
        parts = [s.lacks for s, _ in self.used if s.lacks]
        if any(_by_number(tables) for _, tables in self.used):
            parts.append(raw_syscalls.LACKS.format(arch=self.present.arch))
        parts += [f"{c.name}: not kept in this capture" for c in self.view.columns
                  if any(col == c.name for s, _ in self.used for col, _f in s.optional) and not self.fills(c.name)]
        if self.view.combines:  # once per reason: two sources of a kind may miss the same event
            first: dict[str, str] = {}
            for s, why in self.skipped:
                first.setdefault(why, f"{s.label}: {why}")
            parts += first.values()
        return "; ".join(parts)

    def events_used(self) -> list[str]:
        """The recorded events this view reads here."""
        out = [t.event for _, tables in self.used for t in tables if t.event]
        for s, _ in self.used:
            for _, spec in s.optional:
                if spec.startswith("@"):
                    out += [e for e in spec[1:].split("|") if self.present.recorded(e)]
        return list(dict.fromkeys(out))

    def record(self) -> list[str]:
        """Events that would fill the view best: the first source's, or for a combining
        view every source's."""
        if self.view.combines:
            return list(dict.fromkeys(e for s in self.view.sources for e in s.record()))  # sources share events
        return next((s.record() for s in self.view.sources if s.record()), [])

    def sql(self, present: Present) -> str:
        cols = self.view.columns
        if not self.used:
            return "SELECT " + ", ".join(f"NULL::{c.type} AS {ident(c.name)}" for c in cols) + " WHERE false"
        branches = []
        for s, tables in self.used:
            sel = ", ".join(
                f"CAST(s.{ident(c.name)} AS {c.type}) AS {ident(c.name)}" if s.fills(c.name, tables, present)
                else f"NULL::{c.type} AS {ident(c.name)}"
                for c in cols
            )
            branches.append(f"SELECT {sel} FROM ({s.sql(tables, present)}) s")
        return "\nUNION ALL\n".join(branches)


def _by_number(tables: list[Table]) -> bool:
    """A source read from raw_syscalls: its calls are named by their numbers."""
    return any(t.event in raw_syscalls.EVENTS for t in tables)


def build(view: View, present: Present) -> Built:
    out = Built(view, present)
    for s in view.sources:
        if s.kind and any(u.kind == s.kind for u, _ in out.used):
            continue
        tables, why = s.resolve(present)
        if tables is None:
            out.skipped.append((s, why))
            continue
        out.used.append((s, tables))
        if not view.combines:
            break
    return out
