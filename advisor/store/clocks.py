"""Aligning a blktrace capture with the trace.dat of the same incident.

blktrace stamps each record with the monotonic clock (ktime_get() in
kernel/trace/blktrace.c); a trace.dat carries whatever clock trace-cmd was given
(`trace-cmd record -C mono`, or its default `local`, a per-CPU clock that is not the
monotonic one: 16.03 ms apart on one VM capture). When a store holds both, the
offset is measured on the requests both layers saw: each `block_rq_issue` is matched
to blktrace's `D` with the same device, start sector and size, the k-th of one to the
k-th of the other (only keys seen as often in both, so a capture window that cuts a
repeated sector does not shift the pairs). The median difference is the offset;
its p10-p90 spread says whether one constant explains every pair.
"""

from __future__ import annotations

from advisor.store.ddl import has_table

#: Fewer pairs than this: no estimate worth applying.
MIN_PAIRS = 20
#: p10-p90 spread above this: the differences are not one constant offset (drifting
#: clocks, or not the same run). Two tracers of one request differ by 1-250 us
#: (blk-ext4-fsync: median +1.38 us, max 252.65 us).
MAX_SPREAD_NS = 1_000_000
#: Below this the layers already agree (same clock, tracer latency only): no correction.
SAME_CLOCK_NS = 1_000_000

_PAIRS = """
WITH tp AS (
  SELECT ts, dev AS device, sector, nr_sector::BIGINT * 512 AS bytes,
         row_number() OVER (PARTITION BY dev, sector, nr_sector ORDER BY ts, id) AS k,
         count(*) OVER (PARTITION BY dev, sector, nr_sector) AS n
  FROM raw.block_rq_issue WHERE nr_sector > 0
), bt AS (
  SELECT ts, device, sector, bytes::BIGINT AS bytes,
         row_number() OVER (PARTITION BY device, sector, bytes ORDER BY ts, id) AS k,
         count(*) OVER (PARTITION BY device, sector, bytes) AS n
  FROM raw.blk_events WHERE (action & 65279) = 7 AND (action >> 16) & 1536 = 0 AND bytes > 0
)
SELECT count(*), quantile_disc(tp.ts - bt.ts, 0.5), quantile_disc(tp.ts - bt.ts, 0.1), quantile_disc(tp.ts - bt.ts, 0.9)
FROM tp JOIN bt ON tp.device = bt.device AND tp.sector = bt.sector AND tp.bytes = bt.bytes AND tp.k = bt.k AND tp.n = bt.n
"""


def _has(con, table: str) -> bool:
    return has_table(con, table, "raw")


def estimate(con, ftrace_clock: str | None, info: dict[str, str]) -> dict[str, str]:
    """trace_info facts on how blktrace's times relate to the trace.dat's, and the
    offset (ns) to add to blktrace times: `blktrace_clock_offset_applied_ns`."""
    clock = "mono (ktime_get, kernel/trace/blktrace.c)"
    if "blktrace_ts_origin" in info:  # a merged file or blkparse text: times since the first record
        clock += f", relative to {info['blktrace_ts_origin']}"
    facts = {"blktrace_clock": clock}
    if not (_has(con, "block_rq_issue") and _has(con, "blk_events")):
        return facts
    n, median, p10, p90 = con.execute(_PAIRS).fetchone()
    facts["blktrace_clock_matched_requests"] = str(n)
    if n < MIN_PAIRS:
        facts["blktrace_clock_alignment"] = (
            f"refused: only {n} requests seen by both block_rq_issue and blktrace D (same device, sector, size);"
            f" {MIN_PAIRS} needed to estimate the offset. Cross-layer joins are on two clocks")
        return facts
    spread = p90 - p10
    facts.update(blktrace_clock_offset_ns=str(median), blktrace_clock_offset_p10_ns=str(p10),
                 blktrace_clock_offset_p90_ns=str(p90))
    stated = f"trace.dat - blktrace = {median / 1e3:+,.2f} us (p10 {p10 / 1e3:+,.2f}, p90 {p90 / 1e3:+,.2f}) over {n:,} requests"
    if spread > MAX_SPREAD_NS:
        facts["blktrace_clock_alignment"] = (
            f"refused: {stated}: a spread of {spread / 1e3:,.0f} us is not one constant offset"
            " (clocks drifting apart, or captures of different runs). Cross-layer joins are on two clocks")
    elif abs(median) < SAME_CLOCK_NS and (ftrace_clock or "") in ("mono", ""):
        facts["blktrace_clock_alignment"] = f"same clock ({ftrace_clock or 'mono'}): {stated}, tracer latency only; no correction"
        facts["blktrace_clock_offset_applied_ns"] = "0"
    else:
        facts["blktrace_clock_alignment"] = (
            f"applied: blktrace times shifted onto the trace.dat's clock ({ftrace_clock or 'unknown'}) by {stated}")
        facts["blktrace_clock_offset_applied_ns"] = str(median)
    return facts
