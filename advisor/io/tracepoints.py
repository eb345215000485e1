"""`advisor io` from the block tracepoints of a trace.dat (no blktrace recorded).

The rows come from the `block_requests` view's tracepoint source (advisor/views/block.py):
each block_rq_issue (btt's D) with its block_rq_complete (C), the block_rq_insert (I)
and the block_bio_queue (Q) of the same device and sector before it. The phases those
events show are D2C, I2D and Q2C; the summary has the same keys as the blktrace one,
with the sections the tracepoints cannot fill empty and `notes` saying why.
Zero-byte requests (empty cache flushes) are left out, as btt and the blktrace summary
leave them out.
"""

from __future__ import annotations

from advisor.errors import UsageError

# An insert or queue event is this request's only when it follows the previous issue at
# the same sector: the view takes the last one at or before the issue, which for a sector
# written again after a pause is the previous request's (I2D of 2.4 s on blk-ext4-fsync.dat).
_REQUESTS = """
SELECT dev, process, write, bytes, issue_ts, complete_ts, d2c_ns,
       CASE WHEN prev IS NULL OR insert_ts > prev THEN insert_ts END AS insert_ts,
       CASE WHEN prev IS NULL OR queue_ts > prev THEN queue_ts END AS queue_ts,
       CASE WHEN prev IS NULL OR queue_ts > prev THEN q2c_ns END AS q2c_ns
FROM (SELECT *, coalesce(comm, 'pid ' || pid) AS process,
             lag(issue_ts) OVER (PARTITION BY dev, sector ORDER BY issue_ts) AS prev
      FROM block_requests WHERE bytes > 0 {where})
"""

_PHASES = """
WITH r AS ({requests}), p AS (
  SELECT dev, process, 'D2C' AS phase, d2c_ns AS ns FROM r WHERE d2c_ns IS NOT NULL
  UNION ALL SELECT dev, process, 'I2D', issue_ts - insert_ts FROM r WHERE insert_ts IS NOT NULL
  UNION ALL SELECT dev, process, 'Q2C', q2c_ns FROM r WHERE q2c_ns IS NOT NULL AND complete_ts IS NOT NULL
)
SELECT {key} AS dev, phase, count(*) AS n, min(ns) AS min_ns, avg(ns) AS avg_ns,
       quantile_cont(ns, 0.5) AS p50_ns, quantile_cont(ns, 0.9) AS p90_ns,
       quantile_cont(ns, 0.99) AS p99_ns, max(ns) AS max_ns, sum(ns) AS total_ns
FROM p GROUP BY ALL ORDER BY dev, phase
"""


def _rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def tracepoint_summary(con, device: str | None, buckets_ms: tuple) -> dict:
    """The `io_summary` keys, from block_requests built on block tracepoints."""
    from advisor.views import attach  # noqa: PLC0415 - the views import the store

    views = attach(con)
    built = views.built["block_requests"]
    ticks = views.in_ticks("block_requests")
    if ticks:
        raise UsageError(f"no latency can be measured: {ticks}")
    if not built.available or built.source == "blktrace":
        # A capture with block_rq_complete alone has block events, but no request's issue.
        some = any(views.present.recorded(e) for e in ("block:block_rq_complete", "block:block_rq_insert", "block:block_bio_queue"))
        why = f"no block request can be timed ({built.lacks})" if some and built.lacks else "this store has no block layer events"
        raise UsageError(
            f"{why}: ingest the incident's blktrace files with it, or record"
            " block:block_rq_issue and block:block_rq_complete (advisor capture --for all)")
    devices = [r[0] for r in con.execute("SELECT DISTINCT dev FROM block_requests WHERE bytes > 0 ORDER BY dev").fetchall()]
    if device is not None:
        device = device.replace(":", ",")
        if device not in devices:
            raise UsageError(f"no device {device} in this capture (devices: {', '.join(devices) or 'none'})")
        devices = [device]
    where, params = ("AND dev = ?", [device]) if device else ("", [])
    requests = _REQUESTS.format(where=where)
    edges = ", ".join(str(b) for b in buckets_ms)
    return {
        "devices": devices,
        "phases": _rows(con, _PHASES.format(requests=requests, key="dev"), params),
        "all_devices": _rows(con, _PHASES.format(requests=requests, key="'ALL'"), params),
        "overhead": [],
        "merges": [],
        "depth": [],
        "throughput": _rows(
            con,
            f"WITH r AS ({requests}), span AS (SELECT dev, greatest(max(complete_ts) - min(issue_ts), 1) AS ns FROM r GROUP BY dev)"
            " SELECT r.dev, CASE WHEN r.write THEN 'write' ELSE 'read' END AS direction, count(*) AS completions,"
            " sum(r.bytes) AS bytes, count(*) * 1e9 / any_value(s.ns) AS iops, sum(r.bytes) * 1e9 / any_value(s.ns) AS bytes_per_s"
            " FROM r JOIN span s ON s.dev = r.dev WHERE r.complete_ts IS NOT NULL GROUP BY ALL ORDER BY r.dev, direction",
            params,
        ),
        "seeks": {"d2d": [], "q2q": []},
        "histogram": _rows(
            con,
            f"WITH r AS ({requests}), p AS (SELECT 'D2C' AS phase, d2c_ns AS ns FROM r WHERE d2c_ns IS NOT NULL"
            " UNION ALL SELECT 'Q2C', q2c_ns FROM r WHERE q2c_ns IS NOT NULL AND complete_ts IS NOT NULL),"
            f" b AS (SELECT phase, list_filter([{edges}]::DOUBLE[], lambda x: x >= ns / 1e6)[1] AS le_ms FROM p)"
            " SELECT phase, le_ms, count(*) AS n FROM b GROUP BY ALL ORDER BY phase, le_ms NULLS LAST",
            params,
        ),
        "processes": _rows(
            con,
            f"WITH r AS ({requests}) SELECT process, 'D2C' AS phase, count(*) AS n, avg(d2c_ns) AS avg_ns, max(d2c_ns) AS max_ns"
            " FROM r WHERE d2c_ns IS NOT NULL GROUP BY ALL ORDER BY process",
            params,
        ),
        "mode": "tracepoints",
        "roles": [],
        "notes": [
            f"from the block tracepoints ({built.source}): {built.lacks}; no merges, seeks, queue depth or"
            " device overhead (blktrace shows them). The process is the task that issued the request."
        ],
    }
