"""Block requests, from blktrace or from the block tracepoints of a trace.dat.

blktrace follows each request through every phase (Q G I D C, merges, remaps: see
`io_requests`). The block tracepoints show a request when it is inserted into the
scheduler (block_rq_insert), issued to the driver (block_rq_issue, btt's D) and
completed (block_rq_complete, btt's C), and each bio as it is queued (block_bio_queue,
btt's Q); a completion is matched to its issue by device and sector.
"""

from __future__ import annotations

from advisor.views.model import Column, Source, View
from advisor.views.present import Present

_COLUMNS = (
    Column("dev", "VARCHAR", "the device, MAJ,MIN as blkparse prints it"),
    Column("pid", "INTEGER", "the task the request was issued for"), Column("comm", "VARCHAR", "its name"),
    Column("rwbs", "VARCHAR", "operation and flags as blkparse prints them (W write, S sync, M metadata, F flush/FUA)"),
    Column("write", "BOOLEAN", "a write"), Column("meta", "BOOLEAN", "metadata (RWBS M)"),
    Column("flush", "BOOLEAN", "a cache flush or FUA (RWBS F)"),
    Column("sector", "UBIGINT", "first sector (512 bytes)"), Column("bytes", "UBIGINT", "size"),
    Column("queue_ts", "BIGINT", "Q: the bio queued, ns"), Column("insert_ts", "BIGINT", "I: inserted into the scheduler, ns"),
    Column("issue_ts", "BIGINT", "D: issued to the driver, ns"), Column("complete_ts", "BIGINT", "C: completed, ns"),
    Column("d2c_ns", "BIGINT", "issue to completion (the device's time)"), Column("q2c_ns", "BIGINT", "queued to completion"),
)

_BLKTRACE = """
SELECT dev, pid, comm, rwbs, write, rwbs LIKE '%M%' AS meta, rwbs LIKE '%F%' AS flush, sector, bytes,
       q_ts AS queue_ts, i_ts AS insert_ts, d_ts AS issue_ts, c_ts AS complete_ts, d2c AS d2c_ns, q2c AS q2c_ns
FROM io_requests WHERE NOT remapper"""


def _tracepoints(tables, present: Present) -> str:
    """Each issue with its completion: the first completion of the same device, sector and
    direction at or after it, and before the next issue there (an XFS log sector is
    written over and over: a lost completion must not take the next write's, 20 s later).
    An empty cache flush (RWBS "FF", no sectors) is issued at sector 0 and completes at
    sector (u64)-1, so it takes the device's next completed flush: those few issues alone
    are matched with the flushes and joined back by id (an ASOF join of every issue sorts
    them all: 0.4 of 2.2 s of CPU over 1.74 M issues and 40,879 flushes)."""
    issue, complete = tables
    insert = present.find("block:block_rq_insert") if present.has_fields("block:block_rq_insert", ("dev", "sector")) else None
    queue = present.find("block:block_bio_queue") if present.has_fields("block:block_bio_queue", ("dev", "sector")) else None
    joins, queue_ts, insert_ts = "", "NULL::BIGINT", "NULL::BIGINT"
    if insert:
        joins += f' ASOF LEFT JOIN (SELECT ts, dev, sector FROM "{insert[0]}") ins ON ins.dev = d.dev AND ins.sector = d.sector AND ins.ts <= d.ts'
        insert_ts = "ins.ts"
    if queue:
        joins += f' ASOF LEFT JOIN (SELECT ts, dev, sector FROM "{queue[0]}") q ON q.dev = d.dev AND q.sector = d.sector AND q.ts <= d.ts'
        queue_ts = "q.ts"
    done = "CASE WHEN d.empty_flush THEN f.ts WHEN d.next_issue IS NULL OR c.ts <= d.next_issue THEN c.ts END"
    return f"""
        SELECT dev_major(d.dev) || ',' || dev_minor(d.dev) AS dev, d.pid, d.comm, d.rwbs, d.w AS write,
               d.rwbs LIKE '%M%' AS meta, d.rwbs LIKE '%F%' AS flush, d.sector, CAST(d.nr_sector AS UBIGINT) * 512 AS bytes,
               {queue_ts} AS queue_ts, {insert_ts} AS insert_ts, d.ts AS issue_ts, {done} AS complete_ts,
               {done} - d.ts AS d2c_ns, {done} - {queue_ts} AS q2c_ns
        FROM (SELECT *, rwbs LIKE '%W%' AS w, rwbs LIKE '%F%' AND nr_sector = 0 AS empty_flush,
                     lead(ts) OVER (PARTITION BY dev, sector, rwbs LIKE '%W%' ORDER BY ts) AS next_issue FROM {issue}) d
        ASOF LEFT JOIN (SELECT ts, dev, sector, rwbs LIKE '%W%' AS w FROM {complete}) c
          ON c.dev = d.dev AND c.sector = d.sector AND c.w = d.w AND c.ts >= d.ts
        LEFT JOIN (SELECT e.id, fc.ts FROM (SELECT id, ts, dev FROM {issue} WHERE rwbs LIKE '%F%' AND nr_sector = 0) e
                   ASOF JOIN (SELECT ts, dev FROM {complete} WHERE rwbs LIKE '%F%') fc ON fc.dev = e.dev AND fc.ts >= e.ts) f
          ON f.id = d.id
        {joins}"""


BLOCK_REQUESTS = View(
    "block_requests",
    "block requests from submission to completion (blktrace, else the block tracepoints)",
    _COLUMNS,
    (Source("blktrace", (), lambda t, p: _BLKTRACE, tables=("io_requests",)),
     Source("block_rq_issue/block_rq_complete", (("block:block_rq_issue",), ("block:block_rq_complete",)), _tracepoints,
            fields=(("dev", "sector", "nr_sector", "rwbs"), ("dev", "sector", "rwbs")),
            recording=("block:block_rq_issue", "block:block_rq_complete", "block:block_rq_insert", "block:block_bio_queue"),
            optional=(("insert_ts", "@block:block_rq_insert"), ("queue_ts", "@block:block_bio_queue"), ("q2c_ns", "@block:block_bio_queue")),
            lacks="merges and the G/M phases (blktrace shows them); Q only when block_bio_queue was recorded")),
)

VIEWS = (BLOCK_REQUESTS,)
