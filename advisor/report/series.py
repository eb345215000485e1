"""The incident as plain data for charts: time series, spans and per-task facts,
extracted by SQL from a store. Times are seconds since the capture's first event
(the shared axis of every chart); nothing here draws.

Each part is None (or empty) when the capture did not record the events it needs;
`missing` names those events, so a report can say what to record next time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.replay.workload import DIRTY_EVENTS, PAGE_WAIT_EVENTS, SPANS
from advisor.rules.context import Context, Present, create_macros, span_view
from advisor.rules.model import Span
from advisor.store import blk_views
from advisor.store.ddl import ident

# trace.dat block events carry the kernel's dev_t (MKDEV: major << 20 | minor);
# shown as blkparse prints devices, "7,0".
_DEV = "CAST(dev >> 20 AS VARCHAR) || ',' || CAST(dev & 1048575 AS VARCHAR)"

# A request's latency from issue (driver dispatch) to completion. The completion is the
# first block_rq_complete of the same device and sector at or after the issue.
_TRACE_LATENCY = f"""
WITH i AS (SELECT ts, dev, sector, rwbs FROM {{issue}} WHERE nr_sector > 0),
     c AS (SELECT ts, dev, sector FROM {{complete}})
SELECT i.ts AS ts, c.ts - i.ts AS ns, i.rwbs LIKE '%W%' AS write, {_DEV.replace('dev', 'i.dev')} AS dev
FROM i ASOF JOIN c ON c.dev = i.dev AND c.sector = i.sector AND c.ts >= i.ts
ORDER BY i.ts
"""
_BLK_LATENCY = """
SELECT d_ts AS ts, d2c AS ns, write, dev FROM io_requests
WHERE d_ts IS NOT NULL AND d2c IS NOT NULL AND NOT remapper ORDER BY d_ts
"""
_TRACE_WRITTEN = f"SELECT ts, CAST(nr_sector AS BIGINT) * 512 AS bytes, {_DEV} AS dev FROM {{complete}} WHERE rwbs LIKE '%W%' ORDER BY ts"
_BLK_WRITTEN = "SELECT c_ts AS ts, CAST(bytes AS BIGINT) AS bytes, dev FROM io_requests WHERE write AND c_ts IS NOT NULL AND NOT remapper ORDER BY c_ts"

# The syscall spans of the spans chart (the replay's, less the writes themselves).
SPAN_KINDS = tuple(k for k in SPANS if k != "write")


@dataclass
class Incident:
    t0: int  # ns of the capture's first event: time zero of every chart
    span: tuple[float, float]  # seconds shown on the shared time axis
    dirty: dict | None = None  # global_dirty_state: t, nr_dirty, nr_writeback, dirty_limit, background_thresh
    written: dict | None = None  # per device write completions: t, bytes, dev, source
    latency: dict | None = None  # per request: t, ms, write, dev, source
    spans: list[dict] = field(default_factory=list)  # kind, pid, comm, start, end (None: not seen)
    stalls: dict | None = None  # balance_dirty_pages pauses: t, ms, pid, comm
    waits: dict | None = None  # waits on page writeback: t, pid, comm
    processes: list[dict] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # part → events it needs


def incident(con) -> Incident:
    present = Present.of(con)
    create_macros(con)
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    blk = blk_views.has_blk(con)
    first, last = _bounds(con, info, blk)
    inc = Incident(t0=first, span=(0.0, max((last - first) / 1e9, 1e-6)))
    _dirty_state(con, present, inc)
    _block(con, present, blk, inc)
    _spans(con, present, inc)
    _stalls(con, present, inc)
    inc.processes = processes(con, present)
    return inc


def _bounds(con, info: dict, blk: bool) -> tuple[int, int]:
    if info.get("first_ts") and info.get("last_ts"):
        return int(info["first_ts"]), int(info["last_ts"])
    table = "blk_events" if blk else "events"
    lo, hi = con.execute(f"SELECT min(ts), max(ts) FROM {table}").fetchone()
    return int(lo or 0), int(hi or 0)


def _table(present: Present, *names: str) -> str | None:
    """The store table of the first of these events ("system:event") the capture recorded."""
    for n in names:
        found = present.find(n)
        if found:
            return found[0]
    return None


def _seconds(inc: Incident, ts) -> np.ndarray:
    return (np.asarray(ts, dtype=np.int64) - inc.t0) / 1e9


def _dirty_state(con, present: Present, inc: Incident) -> None:
    t = _table(present, "writeback:global_dirty_state")
    if not t:
        inc.missing["dirty"] = "writeback:global_dirty_state"
        return
    # Page counts, as the kernel keeps them (global_node_page_state(NR_FILE_DIRTY), ...).
    r = con.execute(f"SELECT ts, nr_dirty, nr_writeback, dirty_limit, background_thresh FROM {ident(t)} ORDER BY ts").fetchnumpy()
    if not len(r["ts"]):
        inc.missing["dirty"] = "writeback:global_dirty_state (enabled, never fired)"
        return
    inc.dirty = {"t": _seconds(inc, r["ts"]), **{k: np.asarray(r[k], dtype=np.float64) for k in r if k != "ts"}}


def _block(con, present: Present, blk: bool, inc: Incident) -> None:
    issue, complete = _table(present, "block:block_rq_issue"), _table(present, "block:block_rq_complete")
    if blk:
        lat, written, source = con.execute(_BLK_LATENCY).fetchnumpy(), con.execute(_BLK_WRITTEN).fetchnumpy(), "blktrace D→C"
    elif issue and complete:
        q = {"issue": ident(issue), "complete": ident(complete)}
        lat, written = con.execute(_TRACE_LATENCY.format(**q)).fetchnumpy(), con.execute(_TRACE_WRITTEN.format(**q)).fetchnumpy()
        source = "block_rq_issue → block_rq_complete"
    else:
        inc.missing["block"] = "block:block_rq_issue and block:block_rq_complete (or blktrace)"
        return
    if len(written["ts"]):
        inc.written = {"t": _seconds(inc, written["ts"]), "bytes": np.asarray(written["bytes"], dtype=np.float64),
                       "dev": np.asarray(written["dev"], dtype=object), "source": source}
    if len(lat["ts"]):
        inc.latency = {"t": _seconds(inc, lat["ts"]), "ms": np.asarray(lat["ns"], dtype=np.float64) / 1e6,
                       "write": np.asarray(lat["write"], dtype=bool), "dev": np.asarray(lat["dev"], dtype=object), "source": source}


def _spans(con, present: Present, inc: Incident) -> None:
    for kind in SPAN_KINDS:
        syscalls, where = SPANS[kind]
        ctx = Context()
        span_view(con, Span(name=f"report_{kind}", syscalls=syscalls, where=where, required=True, why=kind), present, ctx)
        if ctx.missing:
            continue
        for pid, comm, syscall, start, end in con.execute(
            f"SELECT pid, comm, syscall, start_ts, end_ts FROM {ident(f'report_{kind}_spans')} ORDER BY start_ts"
        ).fetchall():
            inc.spans.append(_span(inc, kind if kind != "snapshot" else "snapshot (ioctl)", pid, comm, start, end))
    _flusher_spans(con, present, inc)
    if not inc.spans:
        inc.missing["spans"] = "syscalls:sys_enter_/sys_exit_ of sync, fsync, ioctl (snapshot), or writeback:writeback_start/_written"


def _flusher_spans(con, present: Present, inc: Incident) -> None:
    """Flusher work items: writeback_start … writeback_written of one kworker (a flusher
    runs one work item at a time; `reason` says who asked: background, sync, periodic…)."""
    start, done = _table(present, "writeback:writeback_start"), _table(present, "writeback:writeback_written")
    if not start or not done:
        return
    rows = con.execute(
        f"SELECT s.pid, s.comm, coalesce(sym('writeback_start', 'reason', s.reason), CAST(s.reason AS VARCHAR)), s.ts, w.ts "
        f"FROM {ident(start)} s ASOF LEFT JOIN {ident(done)} w ON w.pid = s.pid AND w.ts >= s.ts ORDER BY s.ts"
    ).fetchall()
    for pid, comm, reason, s, e in rows:
        inc.spans.append(_span(inc, f"flush ({reason})", pid, comm, s, e))


def _span(inc: Incident, kind: str, pid, comm, start, end) -> dict:
    return {"kind": kind, "pid": pid, "comm": comm, "start": (start - inc.t0) / 1e9,
            "end": None if end is None else (end - inc.t0) / 1e9}


def _stalls(con, present: Present, inc: Incident) -> None:
    bdp = _table(present, "writeback:balance_dirty_pages")
    if bdp:
        # `pause` is how long balance_dirty_pages() put the writer to sleep, in ms
        # (the tracepoint converts jiffies: pause * 1000 / HZ); 0 = not throttled.
        r = con.execute(f"SELECT ts, pause, pid, comm FROM {ident(bdp)} WHERE pause > 0 ORDER BY ts").fetchnumpy()
        inc.stalls = {"t": _seconds(inc, r["ts"]), "ms": np.asarray(r["pause"], dtype=np.float64),
                      "pid": np.asarray(r["pid"]), "comm": np.asarray(r["comm"], dtype=object)}
    else:
        inc.missing["stalls"] = "writeback:balance_dirty_pages"
    wait = _table(present, *(f"writeback:{n}" for n in PAGE_WAIT_EVENTS))
    if wait:
        r = con.execute(f"SELECT ts, pid, comm FROM {ident(wait)} ORDER BY ts").fetchnumpy()
        inc.waits = {"t": _seconds(inc, r["ts"]), "pid": np.asarray(r["pid"]), "comm": np.asarray(r["comm"], dtype=object)}


def processes(con, present: Present, limit: int = 20) -> list[dict]:
    """The tasks that dirtied pages, were throttled or waited on writeback, busiest first;
    with the program they executed when the capture recorded sched_process_exec."""
    parts = {
        "dirtied": _table(present, *(f"writeback:{n}" for n in DIRTY_EVENTS)),
        "throttled": _table(present, "writeback:balance_dirty_pages"),
        "waits": _table(present, *(f"writeback:{n}" for n in PAGE_WAIT_EVENTS)),
    }
    found = {k: t for k, t in parts.items() if t}
    if not found:
        return []
    union = " UNION ALL ".join(
        f"SELECT pid, comm, '{k}' AS what, " + ("pause" if k == "throttled" else "0") + f" AS pause FROM {ident(t)}"
        for k, t in found.items()
    )
    execs = _table(present, "sched:sched_process_exec")
    exec_join = (f"LEFT JOIN (SELECT pid, last(filename ORDER BY ts) AS program FROM {ident(execs)} GROUP BY pid) x USING (pid)"
                 if execs else "LEFT JOIN (SELECT NULL::INTEGER AS pid, NULL::VARCHAR AS program) x USING (pid)")
    rows = con.execute(
        f"SELECT pid, any_value(comm) AS comm, any_value(x.program) AS program, "
        f"count(*) FILTER (WHERE what = 'dirtied') AS dirtied, count(*) FILTER (WHERE what = 'throttled' AND pause > 0) AS stalls, "
        f"coalesce(sum(pause) FILTER (WHERE what = 'throttled'), 0) AS stalled_ms, count(*) FILTER (WHERE what = 'waits') AS waits "
        f"FROM ({union}) u {exec_join} GROUP BY pid ORDER BY dirtied DESC, stalled_ms DESC, waits DESC, pid LIMIT {int(limit)}"
    ).fetchall()
    keys = ("pid", "comm", "program", "dirtied", "stalls", "stalled_ms", "waits")
    return [dict(zip(keys, r)) for r in rows]
