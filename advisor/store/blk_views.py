"""The user-facing blktrace views over the lean stored tables.

`raw.blk_events` (+ `raw.blk_details` for the few records with more),
`raw.io_requests`, `raw.io_phases` and `raw.blk_devices` hold what the records
hold (device numbers, the action word, sizes; phase values once, in io_phases);
these views give them the columns of the data contract, spelled as blkparse
prints them: `dev` as `8,0`, the action letter, RWBS (blkparse's fill_rwbs),
and the task name from `blk_tasks`. A record shows a task name only from the
first record emitted after the process-name note was read (`known_from`), as
blkparse, which looks names up as it prints, shows it.

Every time the views show (blk_events.ts, io_requests.q_ts .. c_ts,
blk_devices.first_ts / last_ts) is on the trace.dat's clock when the store has
one and the offset was applied (store/clocks.py); the raw tables keep
blktrace's own.

Every view lists its rows in capture order (blk_events by time, then the order
blkparse reads the records; io_requests by the id of the request's first record;
io_phases by their own id): the joins would otherwise hand them on in whatever order
DuckDB's threads finish (see store/views.py).
"""

from __future__ import annotations

from advisor.store.ddl import has_table

PHASES = ("Q2Q", "Q2Q_all", "Q2A", "Q2G", "S2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C")
TIMES = ("q_ts", "g_ts", "s_ts", "i_ts", "m_ts", "d_ts", "c_ts")
PHASE_COLUMNS = ("q2q", "q2q_all", "q2a", "q2g", "s2g", "g2i", "q2m", "i2d", "m2d", "d2c", "q2c")

# Action word: category bits (BLK_TC_*) << 16 | action (__BLK_TA_*), whose
# bit 8 is __BLK_TA_CGROUP (an 8-byte cgroup id starts the payload).
MACROS = """
CREATE MACRO blk_category(action) AS (action >> 16);
CREATE MACRO blk_code(action) AS (action & 65279);
CREATE MACRO blk_dev(device) AS (CAST(device >> 20 AS VARCHAR) || ',' || CAST(device & 1048575 AS VARCHAR));
CREATE MACRO blk_btt_remapper(device) AS ((device >> 20) IN (9, 253, 254));
CREATE MACRO blk_action(action) AS (
  CASE WHEN blk_category(action) & 1024 <> 0 THEN coalesce(['N', 'T', 'm'][blk_code(action) + 1], '?')
       ELSE coalesce(['Q', 'M', 'F', 'G', 'S', 'R', 'D', 'C', 'P', 'U', 'UT', 'I', 'X', 'B', 'A', 'K', '?'][blk_code(action)], '?')
  END);
CREATE MACRO blk_rwbs(action, bytes) AS (
  CASE WHEN blk_category(action) & 4 <> 0 THEN 'F' ELSE '' END
  || CASE WHEN blk_category(action) & 8192 <> 0 THEN 'D' WHEN blk_category(action) & 2 <> 0 THEN 'W'
          WHEN coalesce(bytes, 0) <> 0 THEN 'R' ELSE 'N' END
  || CASE WHEN blk_category(action) & 32768 <> 0 THEN 'F' ELSE '' END
  || CASE WHEN blk_category(action) & 2048 <> 0 THEN 'A' ELSE '' END
  || CASE WHEN blk_category(action) & 8 <> 0 THEN 'S' ELSE '' END
  || CASE WHEN blk_category(action) & 4096 <> 0 THEN 'M' ELSE '' END);
"""

_NOT_NOTE = "blk_category(e.action) & 1024 = 0"

# The last value of each phase per request (a split's two halves give a Q
# two values of some phases; btt's per-IO view, like io_requests, keeps the
# last). Values within one request and phase come from distinct records.
_LAST_PHASES = ", ".join(
    f"arg_max(ns, id) FILTER (WHERE phase = {i}) AS {c}" for i, c in enumerate(PHASE_COLUMNS)
)

VIEWS = f"""
CREATE VIEW blk_events AS
SELECT e.id, e.ts + __OFFSET__ AS ts, e.seq, e.cpu, e.pid,
  CASE WHEN d.printed_comm IS NOT NULL THEN d.printed_comm WHEN e.id >= t.known_from THEN t.comm END AS comm,
  blk_dev(e.device) AS dev, CAST(e.device >> 20 AS INTEGER) AS major, CAST(e.device & 1048575 AS INTEGER) AS minor,
  blk_action(e.action) AS action, coalesce(d.printed_rwbs, blk_rwbs(e.action, e.bytes)) AS rwbs,
  e.sector, e.bytes, e.bytes >> 9 AS nr_sectors, e.error, e.action AS action_raw,
  {_NOT_NOTE} AND blk_category(e.action) & 2 <> 0 AS write,
  {_NOT_NOTE} AND blk_category(e.action) & 512 <> 0 AS pc,
  blk_dev(d.remap_from) AS remap_from_dev, CASE WHEN d.remap_from IS NOT NULL THEN d.arg END AS remap_from_sector,
  blk_dev(d.remap_to) AS remap_to_dev,
  CASE WHEN {_NOT_NOTE} AND blk_code(e.action) = 13 THEN d.arg END AS split_sector,
  CASE WHEN {_NOT_NOTE} AND blk_code(e.action) IN (10, 11) THEN d.arg END AS unplug_depth,
  d.message, d.pdu, d.cgroup
FROM raw.blk_events e LEFT JOIN raw.blk_details d ON d.id = e.id LEFT JOIN blk_tasks t ON t.pid = e.pid
ORDER BY e.ts, e.id;

CREATE VIEW io_requests AS
SELECT q.id, blk_dev(q.device) AS dev, CAST(q.device >> 20 AS INTEGER) AS major,
  CAST(q.device & 1048575 AS INTEGER) AS minor, q.pid, t.comm, blk_rwbs(q.action, q.bytes) AS rwbs,
  blk_category(q.action) & 2 <> 0 AS write, q.sector, q.bytes >> 9 AS nr_sectors, q.bytes,
  {", ".join(f"q.{c} + __OFFSET__ AS {c}" for c in TIMES)}, q.d_sector, q.d_nr_sectors, q.c_sector,
  {", ".join(f"p.{c}" for c in PHASE_COLUMNS)}, q.d_matches, q.replaced,
  coalesce(r.remapper, false) AS remapper, blk_btt_remapper(q.device) AS btt_remapper
FROM raw.io_requests q LEFT JOIN blk_device_roles r ON r.device = q.device
LEFT JOIN (SELECT q_id, {_LAST_PHASES} FROM raw.io_phases GROUP BY q_id) p ON p.q_id = q.id
LEFT JOIN blk_tasks t ON t.pid = q.pid
ORDER BY q.id;

CREATE VIEW io_phases AS
SELECT p.id, p.q_id, blk_dev(q.device) AS dev, q.pid, t.comm,
  [{", ".join(f"'{p}'" for p in PHASES)}][p.phase + 1] AS phase, p.ns,
  coalesce(r.remapper, false) AS remapper, blk_btt_remapper(q.device) AS btt_remapper
FROM raw.io_phases p JOIN raw.io_requests q ON q.id = p.q_id LEFT JOIN blk_tasks t ON t.pid = q.pid
LEFT JOIN blk_device_roles r ON r.device = q.device
ORDER BY p.id;

CREATE VIEW blk_devices AS
SELECT dev, first_ts + __OFFSET__ AS first_ts, last_ts + __OFFSET__ AS last_ts, max_depth_read, max_depth_write,
  btt_queued, btt_issued, avg_active_at_q
FROM raw.blk_devices ORDER BY dev;
"""

# Which devices remap bios to others, read from the capture itself. btt (blktrace 1.2.0,
# btt/devmap.c remapper_dev) takes every device of major 9 (md), 253 or 254 for a
# remapper, and counts its Q2Q, Q2C and Q2A apart ("Q2Cdm"), with no per-device Q2C,
# overhead or active requests. But 254 is a dynamic major: a virtio disk is often 254,0
# (sample blk-ext4-fsync: `/dev/vda` 254:0, 1,912 D records of its own, no A record).
# A device is a remapper here when the capture shows it: it is the source of remap (A)
# records (`A ... 254,0 <- (253,0) 2048`: dm-0 sends its bios down), or it queues bios
# (Q) but never issues a request (no D: a bio-based device such as dm or md).
ROLES = """
CREATE TABLE blk_device_roles AS
WITH counts AS (
  SELECT device, count(*) FILTER (WHERE blk_code(action) = 1) AS queued,
         count(*) FILTER (WHERE blk_code(action) = 7) AS issued,
         count(*) FILTER (WHERE blk_code(action) = 13) AS splits
  FROM raw.blk_events WHERE blk_category(action) & 1024 = 0 AND blk_category(action) & 512 = 0 GROUP BY device
), sources AS (
  SELECT d.remap_from AS device, count(*) AS remapped, min(blk_dev(e.device)) AS remapped_to
  FROM raw.blk_details d JOIN raw.blk_events e ON e.id = d.id
  WHERE d.remap_from IS NOT NULL AND d.remap_from <> e.device GROUP BY d.remap_from
)
SELECT c.device, blk_dev(c.device) AS dev, c.queued, c.issued, c.splits, coalesce(s.remapped, 0) AS remapped_away,
       s.remapped_to, coalesce(s.remapped, 0) > 0 OR (c.queued > 0 AND c.issued = 0) AS remapper,
       blk_btt_remapper(c.device) AS btt_remapper,
       CASE WHEN coalesce(s.remapped, 0) > 0 THEN 'remapper: ' || s.remapped || ' bios remapped to ' || s.remapped_to || ' (A records)'
            WHEN c.queued > 0 AND c.issued = 0 THEN 'remapper: queues bios (' || c.queued || ' Q) but issues no request (no D)'
            ELSE 'disk: issues its own requests (' || c.issued || ' D)' || CASE WHEN c.splits > 0 THEN ', ' || c.splits || ' splits (X)' ELSE '' END
       END AS role
FROM counts c LEFT JOIN sources s ON s.device = c.device ORDER BY c.device;
"""

#: Records per action letter, counted on the stored action words.
ACTION_COUNTS = (
    "SELECT blk_action(action) AS a, sum(n) FROM (SELECT action, count(*) AS n FROM raw.blk_events GROUP BY action)"
    " GROUP BY a"
)

#: Stored in schema raw, shown through the views above.
RAW_TABLES = ("blk_events", "blk_details", "io_requests", "io_phases", "blk_devices")


def has_blk(con) -> bool:
    """Does the store hold blktrace data? (ftrace-only stores have no raw.blk_events.)"""
    return has_table(con, "blk_events", "raw")


def create(con, offset_ns: int = 0) -> None:
    """The views; `offset_ns` is added to every blktrace time (the clock offset to the
    trace.dat of the same store, store/clocks.py)."""
    con.execute(MACROS + ROLES + VIEWS.replace("__OFFSET__", str(int(offset_ns))))
