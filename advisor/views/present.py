"""Which events a capture recorded, and under which table.

trace.dat files embed the format of every event that was enabled, so a format with
zero rows means "enabled, never fired" (vmscan events without memory pressure). Text
captures list only the events that fired, and may not name their system
(`trace-cmd report` prints `writeback_dirty_folio:`, not `writeback:...`): such
events are matched by name alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from advisor.store.ddl import has_table
from advisor.views import raw_syscalls


@dataclass
class Present:
    """"system:event" → (table, rows), and the columns of each table."""

    tables: dict[str, tuple[str, int]] = field(default_factory=dict)
    columns: dict[str, set[str]] = field(default_factory=dict)
    text_capture: bool = False
    #: "syscalls:sys_enter_write" → its argument fields in order (fd, None, count: the
    #: parser leaves user-space pointers like buf out): `raw.syscall_spans`' arg0, arg1 ...
    syscall_args: dict[str, list[str]] = field(default_factory=dict)
    #: The store has the syscalls paired at ingest (`raw.syscall_spans`).
    paired_syscalls: bool = False
    #: The trace clock, when the trace's timestamps are not nanoseconds: `trace-cmd
    #: record -C x86-tsc` stores TSC cycles (report prints "[001]32915178516790:"),
    #: `-C counter` a bare sequence number; no duration can be measured from them.
    ticks_clock: str | None = None
    #: The capture has lost-event markers (`lost_events`): a syscall span across one may
    #: pair an enter with another call's exit.
    lost_markers: bool = False
    #: The capture's `uname`, and the architecture whose syscall numbers it implies
    #: (advisor.views.raw_syscalls): what names the calls of `-e raw_syscalls`.
    uname: str | None = None
    arch: str | None = None

    @classmethod
    def of(cls, con, events: set[str] | None = None, tables: tuple[str, ...] = (), hide: frozenset[str] = frozenset()) -> "Present":
        """`events` ("system:event"), `tables`: whose columns to read (all when None;
        reading every table's columns costs ~0.1 s on a store of a hundred tables).
        `hide`: events to treat as not recorded ("system:event"), to see what a capture
        without them would show."""
        out = cls()
        formats = con.execute("SELECT system, event, table_name, events, CASE WHEN system = 'syscalls' AND event LIKE 'sys_enter_%' "
                              "THEN [CASE WHEN NOT contains(f.type, '*') THEN f.name END FOR f IN fields IF NOT starts_with(f.name, 'common_') "
                              "AND f.name <> '__syscall_nr'] END "
                              "FROM event_formats").fetchall()
        for system, event, table, n, args in formats:
            if f"{system}:{event}" in hide or any(h.endswith(f":{event}") for h in hide if not system):
                continue
            out.tables[f"{system or '*'}:{event}"] = (table, int(n or 0))
            out.text_capture |= not system
            if args is not None:
                out.syscall_args[f"{system}:{event}"] = list(args)
        # A table, or a view over its Parquet file: information_schema lists both.
        info = dict(con.execute("SELECT key, value FROM trace_info WHERE key IN ('ts_unit', 'clock', 'uname')").fetchall())
        out.uname = info.get("uname") or None
        out.arch = raw_syscalls.architecture(out.uname)
        if info.get("ts_unit", "ns") != "ns":
            out.ticks_clock = info.get("clock") or "unknown"
        out.paired_syscalls = has_table(con, "syscall_spans", "raw")
        out.lost_markers = has_table(con, "lost_events", "main") and bool(
            con.execute("SELECT count(*) FROM (SELECT 1 FROM lost_events LIMIT 1)").fetchone()[0])
        wanted = None
        if events is not None:
            wanted = [f[0] for f in (out.find(e) for e in events) if f] + list(tables)
        sql = "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main'"
        rows = con.execute(sql + " AND list_contains(?, table_name)", [wanted]).fetchall() if wanted is not None else con.execute(sql).fetchall()
        for table, column in rows:
            out.columns.setdefault(table, set()).add(column)
        return out

    def find(self, name: str) -> tuple[str, int] | None:
        """(table, rows) of "system:event", also when a text capture left out the system."""
        system, event = name.split(":")
        return self.tables.get(f"{system}:{event}") or self.tables.get(f"*:{event}")

    def recorded(self, name: str) -> bool:
        return self.find(name) is not None

    def rows(self, name: str) -> int:
        found = self.find(name)
        return found[1] if found else 0

    def has_fields(self, name: str, fields: tuple[str, ...]) -> bool:
        """Does the event's table have these columns? A text capture keeps only fields
        printed as key=value, by position (the block events) or as pairs after the device
        (`dev 7,0 ino 12`: ext4, jbd2, xfs, writeback's inode events): a tracepoint whose
        print format shows a field in free text (btrfs's extent_writepage prints
        `index` as "page_index=") has no column of the format's name."""
        found = self.find(name)
        have = self.columns.get(found[0], set()) if found is not None else set()
        # "a|b": either name (a format field, or the name a text capture prints it under).
        return found is not None and all(any(f in have for f in spec.split("|")) for spec in fields)

    def systems_with_rows(self) -> dict[str, int]:
        """Events that fired, per system (or per event-name prefix for text captures)."""
        out: dict[str, int] = {}
        for key, (_, n) in self.tables.items():
            if n:
                system, event = key.split(":", 1)
                name = system if system != "*" else event.split("_", 1)[0]
                out[name] = out.get(name, 0) + n
        return out
