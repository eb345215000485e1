"""Domain views: what rules, replay and report read, built from whatever the capture has.

`attach(con)` creates one temporary view per domain object on a store's connection
(sync_ops, fsync_ops, snapshot_ops, write_ops, dirtying, pages_written, inode_writeback,
writeback_works, page_waits, dirty_state, reclaim, flush_space, commits, sync_fs_calls,
block_requests), each filled from the best of its event sources the capture recorded,
plus `capture_views`: per view, the source used, its rows' meaning and what it cannot
show. Nothing above this package names a raw event table.

A need is a view ("fsync_ops") or one of its columns ("fsync_ops.dur_ns"): met when the
view has a source here that fills it. `unmet(needs)` says, for each need that is not
met, what would meet it.
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass

import duckdb

from advisor.recording import RECORD_BUFFER_KB
from advisor.store.ddl import ident
from advisor.views import block, filesystems, macros, ops, pagecache, reclaim, stacking
from advisor.views.buffers import keep_one_buffer
from advisor.views.filesystems import Filesystems
from advisor.views.model import Built, Column, Source, View, build
from advisor.views.present import Present

CATALOG: dict[str, View] = {v.name: v for v in (*ops.VIEWS, *pagecache.VIEWS, *reclaim.VIEWS, *filesystems.VIEWS, *block.VIEWS)}
# Every event and store table some view reads (their columns are looked up once).
CATALOG_EVENTS = {e for v in CATALOG.values() for s in v.sources for e in (*(n for g in s.events for n in g), *s.recording)}
CATALOG_EVENTS |= set(ops.FSYNC_FILE_EVENTS) | {"block:block_rq_insert", "block:block_bio_queue"}
CATALOG_TABLES = tuple(t for v in CATALOG.values() for s in v.sources for t in s.tables)


def check_need(need: str) -> str | None:
    """Why a need names no view or column of the catalog (for rule files), or None."""
    view, _, column = need.partition(".")
    if view not in CATALOG:
        return f"unknown view {view!r} (views: {', '.join(CATALOG)})"
    if column and CATALOG[view].column(column) is None:
        return f"view {view!r} has no column {column!r}"
    return None


def record_events(needs: list[str], available: set[str] | None = None) -> list[str]:
    """The events to record so that every need can be met (best sources), each once;
    with `available` (the running kernel's events), under the name it gives them
    (writeback_dirty_page before 5.16, writeback_dirty_folio from 5.16)."""
    out: dict[str, None] = {}
    for need in needs:
        view = CATALOG[need.partition(".")[0]]
        for e in build(view, Present()).record():
            out.setdefault(_kernels_name(e, available))
    return list(out)


def _kernels_name(name: str, available: set[str] | None) -> str:
    if available is None or name in available:
        return name
    for group in (g for v in CATALOG.values() for s in v.sources for g in s.events if name in g):
        found = next((n for n in group if n in available), None)
        if found:
            return found
    return name



def record_command(events: list[str], duration: float = 30, output: str = "writeback.dat") -> str:
    """The trace-cmd line that records these events (what a finding lacks)."""
    argv = ["trace-cmd", "record", "-C", "mono", "-b", str(RECORD_BUFFER_KB), "-o", output]  # blktrace's clock (capture/recipe.py)
    for name in events:
        argv += ["-e", name]
    return shlex.join(argv + ["sleep", f"{duration:g}"])


#: Tick clocks that count at a steady rate: `trace-cmd record -C x86-tsc` stores TSC
#: cycles (a constant rate on CPUs with constant_tsc), so 3,000,000 ticks are twice as
#: long as 1,500,000 whatever the frequency. Not `counter` (one per event) nor `uptime`
#: (jiffies: an fsync's enter and exit fall 0 or 1 tick apart).
STEADY_CLOCKS = frozenset({"x86-tsc"})


def ticks_why(view: str, clock: str) -> str:
    """Why a view is not measurable in a capture whose timestamps are clock ticks."""
    return (f"{view}: the capture's timestamps are {clock} clock ticks, not nanoseconds; record with "
            "trace-cmd's default clock (local), or add --tsc2nsec to -C x86-tsc")


@dataclass
class Unmet:
    need: str
    why: str  # what the capture lacks, in words
    record: list[str]  # events that would meet it


@dataclass
class Views:
    present: Present
    built: dict[str, Built]
    filesystems: Filesystems
    #: Events the views were built without (attach's `hide`): not the capture's own views.
    hidden: frozenset[str] = frozenset()

    def met(self, need: str, clock: str = "ns") -> bool:
        """`clock`: what the reader needs of the timestamps (a rule query's `clock`:
        "ns", "steady" or "any"; see advisor.rules.model.Query)."""
        view, _, column = need.partition(".")
        b = self.built[view]
        if self.in_ticks(view, clock):
            return False  # no duration, rate or time window can be measured
        return b.available and (not column or b.fills(column))

    def unmet(self, needs, clock: str = "ns") -> list[Unmet]:
        out = []
        for need in dict.fromkeys(needs):
            if self.met(need, clock):
                continue
            view, _, column = need.partition(".")
            b = self.built[view]
            ticks = self.in_ticks(view, clock)
            if ticks:
                out.append(Unmet(need, ticks, []))
                continue
            why = (f"{view}.{column}: {b.source} does not show it ({b.lacks})" if b.available
                   else f"{view}: {b.lacks or 'no source recorded'}")
            # Only what the capture lacks: an fsync-only capture needs btrfs_sync_file
            # for fsync_ops.ino, not the fsync syscalls it has.
            out.append(Unmet(need, why, [e for e in b.record() if not self.present.recorded(e)]))
        return out

    def summary(self) -> list[dict]:
        """Per view: the source used, what it cannot show, and what to record for more."""
        return [{"view": name, "source": b.source, "available": b.available, "lacks": self._lacks(name, b) or None,
                 "record": b.record()} for name, b in self.built.items()]

    def _lacks(self, name: str, b: Built) -> str:
        return "; ".join(filter(None, [self.in_ticks(name), b.lacks]))

    def in_ticks(self, view: str, clock: str = "ns") -> str | None:
        """Why the view measures nothing here for a reader needing `clock` of the
        timestamps when its rows are trace events timed in clock ticks (see
        Present.ticks_clock); None otherwise. Ticks keep the order of events ("any"),
        and x86-tsc cycles the ratio of two durations ("steady")."""
        b = self.built[view]
        ticks = self.present.ticks_clock
        if not ticks or not b.available or not b.timed_by_events:
            return None
        if clock == "any" or (clock == "steady" and ticks in STEADY_CLOCKS):
            return None
        return ticks_why(view, ticks)


def attach(con, hide: frozenset[str] = frozenset()) -> Views:
    """Create the macros and every domain view on this connection (temporary: the store
    itself stays read-only) and return what each view is built from. `hide`: events
    ("system:event") to build the views without, as if the capture had not recorded them."""
    macros.create(con)
    present = Present.of(con, CATALOG_EVENTS | filesystems.BDI_EVENTS, CATALOG_TABLES, hide)
    keep_one_buffer(con, present)
    built = {name: build(view, present) for name, view in CATALOG.items()}
    for name, b in built.items():
        con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(name)} AS {b.sql(present)}")
    if not hide:
        for name in _held_views(con) & built.keys():
            _read_held(con, name)
    macros.create_over_views(con)
    views = Views(present, built, filesystems.filesystems(con, present), hide)
    rows = [(s["view"], s["source"], s["available"], s["lacks"] or "", ", ".join(s["record"])) for s in views.summary()]
    con.execute("CREATE OR REPLACE TEMP TABLE capture_views (view VARCHAR, source VARCHAR, available BOOLEAN, lacks VARCHAR, record VARCHAR)")
    con.executemany("INSERT INTO capture_views VALUES (?, ?, ?, ?, ?)", rows)
    fs_rows = [(fs, "; ".join(ev)) for fs, ev in views.filesystems.shown.items()]
    fs_rows += [("unknown", f"bdi {b}") for b in views.filesystems.other_bdis]
    if views.filesystems.deviceless:
        fs_rows.append(("no device", f"bdi {filesystems.NO_DEVICE_BDI}: tmpfs, proc, pipes"))
    con.execute("CREATE OR REPLACE TEMP TABLE capture_filesystems (fs VARCHAR, evidence VARCHAR)")
    if fs_rows:
        con.executemany("INSERT INTO capture_filesystems VALUES (?, ?)", fs_rows)
    return views


@contextlib.contextmanager
def held(con, views: Views, name: str, where: str | None = None):
    """View `name` computed once for the `with` block: inside it the view reads its rows
    from a temporary table (also after another `attach` on the connection), dropped at
    the end of the block that made it. For a view a command reads many times: the replay
    and the report read block_requests up to nine times, and each read paired every
    issue with its completion again (on a 10.8 M-event ext4 capture with 1.74 M
    requests: 3.3-4.4 s each time, the process at up to 1 GiB while it sorts).

    With `where` (a predicate on the view's columns) the block sees only those rows,
    also inside a block that already holds the view; the outer block's rows come back
    when it ends. Views built with events hidden (attach's `hide`, the ablation tests'
    captures as if an event had not been recorded) are not the capture's own: they are
    never held, only narrowed by `where` (_narrowed_hidden)."""
    if not views.built[name].available or (views.hidden and where is None):
        yield
        return
    if views.hidden:
        with _narrowed_hidden(con, name, where):
            yield
        return
    outer = name in _held_views(con)
    if outer and where is None:
        yield
        return
    table = (_NARROWED_PREFIX if outer else _HELD_PREFIX) + name
    con.execute(f"CREATE TEMP TABLE {ident(table)} AS SELECT * FROM {ident(name)}" + (f" WHERE {where}" if where else ""))
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(name)} AS SELECT * FROM {ident(table)}")
        yield
    finally:
        # Not over an error of the block's own (a query interrupted by Ctrl-C leaves the
        # connection refusing more until the error is handled).
        with contextlib.suppress(duckdb.Error):
            if outer:
                _read_held(con, name)
            else:
                con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(name)} AS {views.built[name].sql(views.present)}")
            con.execute(f"DROP TABLE IF EXISTS {ident(table)}")


@contextlib.contextmanager
def _narrowed_hidden(con, name: str, where: str):
    """View `name` (as attach(hide=...) built it, or narrowed already) seen through `where`
    for the block, then as it was: its rows in a table of their own, which no `attach`
    reads."""
    (before,) = con.execute("SELECT sql FROM duckdb_views() WHERE temporary AND view_name = ?", [name]).fetchone()
    depth = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND starts_with(table_name, ?)",
                        [_HIDDEN_PREFIX]).fetchone()[0]
    table = f"{_HIDDEN_PREFIX}{depth}_{name}"
    con.execute(f"CREATE TEMP TABLE {ident(table)} AS SELECT * FROM {ident(name)} WHERE {where}")
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(name)} AS SELECT * FROM {ident(table)}")
        yield
    finally:
        with contextlib.suppress(duckdb.Error):
            con.execute(f"DROP VIEW IF EXISTS {ident(name)}")
            con.execute(before)
            con.execute(f"DROP TABLE IF EXISTS {ident(table)}")


@contextlib.contextmanager
def filesystem_requests(con, views: Views):
    """block_requests held, with only the requests of the devices the filesystem writes
    (advisor.views.stacking: a loop device's requests, not those of the device under its
    backing file too). Yields the choice (None without block requests); the view is
    whole again after the block."""
    if not views.met("block_requests"):
        yield None
        return
    with held(con, views, "block_requests"):
        choice = stacking.workload_devices(con, views)
        with held(con, views, "block_requests", where=choice.where()):
            yield choice


# The views that name a page's backing device (bdi "7:0", or "btrfs-1" with no device), and
# the column that does: inode_writeback's rows from sb_mark/sb_clear_inode_writeback carry
# the superblock's device instead, which for a block-device filesystem is its bdi's.
_BDI_VIEWS = {"dirtying": "bdi", "inode_writeback": "coalesce(bdi, dev)", "page_waits": "bdi", "writeback_works": "bdi"}


@contextlib.contextmanager
def filesystem_pages(con, views: Views, choice):
    """Inside filesystem_requests: dirtying, inode writeback, page waits and the flusher's
    work items held without those on the block devices the choice left out. Those are
    another filesystem's pages (the host's root ext4 under a loop device: trace-cmd's own
    output file, logs), which the filesystem's device never writes. Yields a sentence
    saying what was left out, or None when nothing was."""
    bdis = sorted(d.replace(",", ":") for d in (choice.dropped if choice else ()))
    if not bdis or not views.met("dirtying"):
        yield None
        return
    listed = ", ".join("'" + b.replace("'", "''") + "'" for b in bdis)
    n, inodes = con.execute(f"SELECT count(*), count(DISTINCT ino) FROM dirtying WHERE bdi IN ({listed})").fetchone()
    if not n:
        yield None
        return
    with contextlib.ExitStack() as stack:
        for name, bdi in _BDI_VIEWS.items():
            if views.met(name):
                stack.enter_context(held(con, views, name, where=f"{bdi} IS NULL OR {bdi} NOT IN ({listed})"))
        yield (f"{n:,} dirtying events of {inodes:,} inodes on bdi {', '.join(bdis)} left out, with that bdi's inode writeback, "
               "page waits and flusher work: another filesystem's pages, on a device whose requests are left out")


_HELD_PREFIX = "held_"
# Rows of a view built with events hidden, narrowed for a block (never read by `attach`).
_HIDDEN_PREFIX = "hidden_narrowed_"
# A held view narrowed further inside its block (not re-read by another `attach`).
_NARROWED_PREFIX = "narrowed_"


def _held_views(con) -> set[str]:
    rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary AND starts_with(table_name, ?)", [_HELD_PREFIX]).fetchall()
    return {r[0][len(_HELD_PREFIX):] for r in rows}


def _read_held(con, name: str) -> None:
    con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(name)} AS SELECT * FROM {ident(_HELD_PREFIX + name)}")


__all__ = ["CATALOG", "Built", "Column", "Filesystems", "Source", "Unmet", "View", "Views", "attach", "check_need",
           "filesystem_pages", "filesystem_requests", "held", "record_command", "record_events"]
