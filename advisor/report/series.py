"""The incident as plain data for charts: time series, spans and per-task facts,
extracted by SQL from a store. Times are seconds since the capture's first event
(the shared axis of every chart); nothing here draws.

Each part is None (or empty) when the capture did not record the events it needs;
`missing` names those events, so a report can say what to record next time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.views import Views, attach, held

_LATENCY = """
SELECT issue_ts AS ts, d2c_ns AS ns, write, dev FROM block_requests
WHERE issue_ts IS NOT NULL AND d2c_ns IS NOT NULL AND bytes > 0 ORDER BY issue_ts
"""
_WRITTEN = "SELECT complete_ts AS ts, CAST(bytes AS BIGINT) AS bytes, dev FROM block_requests WHERE write AND complete_ts IS NOT NULL ORDER BY complete_ts"

# The operations of the spans chart: kind shown → view.
SPAN_KINDS = {"sync": "sync_ops", "fsync": "fsync_ops", "sync_file_range": "sync_file_range_ops", "snapshot (ioctl)": "snapshot_ops"}


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


def incident(con, views: Views | None = None) -> Incident:
    views = views or attach(con)
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    first, last = _bounds(con, info)
    inc = Incident(t0=first, span=(0.0, max((last - first) / 1e9, 1e-6)))
    _dirty_state(con, views, inc)
    _block(con, views, inc)
    _spans(con, views, inc)
    _stalls(con, views, inc)
    inc.processes = processes(con, views)
    return inc


def _bounds(con, info: dict) -> tuple[int, int]:
    if info.get("first_ts") and info.get("last_ts"):
        return int(info["first_ts"]), int(info["last_ts"])
    lo, hi = con.execute("SELECT min(issue_ts), max(complete_ts) FROM block_requests").fetchone()
    return int(lo or 0), int(hi or 0)


def _missing(views: Views, need: str) -> str:
    return ", ".join(views.unmet([need])[0].record) if views.unmet([need]) else ""


def _seconds(inc: Incident, ts) -> np.ndarray:
    return (np.asarray(ts, dtype=np.int64) - inc.t0) / 1e9


def _dirty_state(con, views: Views, inc: Incident) -> None:
    if not views.met("dirty_state.nr_dirty"):
        inc.missing["dirty"] = _missing(views, "dirty_state.nr_dirty") or "writeback:global_dirty_state (its fields)"
        return
    # Page counts, as the kernel keeps them (global_node_page_state(NR_FILE_DIRTY), ...).
    r = con.execute("SELECT ts, nr_dirty, nr_writeback, dirty_limit, background_thresh FROM dirty_state ORDER BY ts").fetchnumpy()
    if not len(r["ts"]):
        inc.missing["dirty"] = "writeback:global_dirty_state (enabled, never fired)"
        return
    inc.dirty = {"t": _seconds(inc, r["ts"]), **{k: np.asarray(r[k], dtype=np.float64) for k in r if k != "ts"}}


def _block(con, views: Views, inc: Incident) -> None:
    if not views.met("block_requests"):
        inc.missing["block"] = "block:block_rq_issue and block:block_rq_complete (or blktrace)"
        return
    with held(con, views, "block_requests"):
        lat, written = con.execute(_LATENCY).fetchnumpy(), con.execute(_WRITTEN).fetchnumpy()
    source = "blktrace D→C" if views.built["block_requests"].source == "blktrace" else "block_rq_issue → block_rq_complete"
    if len(written["ts"]):
        inc.written = {"t": _seconds(inc, written["ts"]), "bytes": np.asarray(written["bytes"], dtype=np.float64),
                       "dev": np.asarray(written["dev"], dtype=object), "source": source}
    if len(lat["ts"]):
        inc.latency = {"t": _seconds(inc, lat["ts"]), "ms": np.asarray(lat["ns"], dtype=np.float64) / 1e6,
                       "write": np.asarray(lat["write"], dtype=bool), "dev": np.asarray(lat["dev"], dtype=object), "source": source}


def _spans(con, views: Views, inc: Incident) -> None:
    for kind, view in SPAN_KINDS.items():
        if not views.met(view):
            continue
        for pid, comm, start, end in con.execute(f"SELECT pid, comm, start_ts, end_ts FROM {view} ORDER BY start_ts").fetchall():
            inc.spans.append(_span(inc, kind, pid, comm, start, end))
    _flusher_spans(con, views, inc)
    if not inc.spans:
        inc.missing["spans"] = "syscalls:sys_enter_/sys_exit_ of sync, fsync, ioctl (snapshot), or writeback:writeback_start/_written"


def _flusher_spans(con, views: Views, inc: Incident) -> None:
    """Flusher work items (a flusher runs one at a time; `reason` says who asked:
    background, sync, periodic…)."""
    if not views.met("writeback_works"):
        return
    rows = con.execute("SELECT pid, comm, coalesce(reason_name, CAST(reason AS VARCHAR)), start_ts, end_ts FROM writeback_works "
                       "ORDER BY start_ts").fetchall()
    for pid, comm, reason, s, e in rows:
        inc.spans.append(_span(inc, f"flush ({reason})", pid, comm, s, e))


def _span(inc: Incident, kind: str, pid, comm, start, end) -> dict:
    return {"kind": kind, "pid": pid, "comm": comm, "start": (start - inc.t0) / 1e9,
            "end": None if end is None else (end - inc.t0) / 1e9}


def _stalls(con, views: Views, inc: Incident) -> None:
    if views.met("throttling"):
        r = con.execute("SELECT ts, pause_ms, pid, comm FROM throttling WHERE pause_ms > 0 ORDER BY ts").fetchnumpy()
        inc.stalls = {"t": _seconds(inc, r["ts"]), "ms": np.asarray(r["pause_ms"], dtype=np.float64),
                      "pid": np.asarray(r["pid"]), "comm": np.asarray(r["comm"], dtype=object)}
    else:
        inc.missing["stalls"] = "writeback:balance_dirty_pages"
    if views.met("page_waits"):
        r = con.execute("SELECT ts, pid, comm FROM page_waits ORDER BY ts").fetchnumpy()
        inc.waits = {"t": _seconds(inc, r["ts"]), "pid": np.asarray(r["pid"]), "comm": np.asarray(r["comm"], dtype=object)}


def processes(con, views: Views, limit: int = 20) -> list[dict]:
    """The tasks that dirtied pages, were throttled or waited on writeback, busiest first;
    with the program they executed when the capture recorded it."""
    parts = {"dirtied": "dirtying", "throttled": "throttling", "waits": "page_waits"}
    found = {k: v for k, v in parts.items() if views.met(v)}
    if not found:
        return []
    union = " UNION ALL ".join(
        f"SELECT pid, comm, '{k}' AS what, " + ("pause_ms" if k == "throttled" else "0") + f" AS pause FROM {v}"
        for k, v in found.items()
    )
    rows = con.execute(
        f"SELECT pid, any_value(comm) AS comm, any_value(x.program) AS program, "
        f"count(*) FILTER (WHERE what = 'dirtied') AS dirtied, count(*) FILTER (WHERE what = 'throttled' AND pause > 0) AS stalls, "
        f"coalesce(sum(pause) FILTER (WHERE what = 'throttled'), 0) AS stalled_ms, count(*) FILTER (WHERE what = 'waits') AS waits "
        f"FROM ({union}) u LEFT JOIN (SELECT pid, last(filename ORDER BY ts) AS program FROM execs GROUP BY pid) x USING (pid) "
        f"GROUP BY pid ORDER BY dirtied DESC, stalled_ms DESC, waits DESC, pid LIMIT {int(limit)}"
    ).fetchall()
    keys = ("pid", "comm", "program", "dirtied", "stalls", "stalled_ms", "waits")
    return [dict(zip(keys, r)) for r in rows]
