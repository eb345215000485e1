-- sample: blk-ext4-fsync.dat blk-ext4-fsync
-- The slowest block requests of the run (blktrace, btt's Q2C) and the
-- writeback pass (trace.dat) whose flusher queued them. Both captures use
-- the monotonic clock (trace-cmd record -C mono), so times compare directly.
-- Reason names are those of writeback_start's print_fmt (Linux 6.1).
WITH passes AS (
  SELECT s.pid, s.ts AS start_ts, s.reason,
         (SELECT min(w.ts) FROM writeback_written w WHERE w.pid = s.pid AND w.ts >= s.ts) AS end_ts
  FROM writeback_start s
)
SELECT r.comm, r.rwbs, r.sector, r.nr_sectors,
       round(r.q2c / 1e6, 2) AS q2c_ms, round(r.d2c / 1e6, 2) AS d2c_ms,
       ['background', 'vmscan', 'sync', 'periodic', 'laptop_timer', 'fs_free_space',
        'forker_thread', 'foreign_flush'][p.reason + 1] AS pass,
       round((r.q_ts - p.start_ts) / 1e6, 1) AS ms_into_pass
FROM io_requests r
JOIN passes p ON r.pid = p.pid AND r.q_ts BETWEEN p.start_ts AND p.end_ts
ORDER BY r.q2c DESC
LIMIT 5;
