"""btt-style block I/O summary of a store, as plain data.

Phase times come from `io_phases` (one row per value btt adds to its
averages, so min/avg/max/N equal btt's); device counts and seeks from
`blk_events` and `blk_devices`. Times are nanoseconds; the renderer
converts. The queries' rows go through `compose`, which the parser's own
rows for binary blktrace go through too (advisor/io/fast.py): one summary,
two sources of the same rows.
"""

from __future__ import annotations

import contextlib

from advisor.errors import UsageError
from advisor.store.ddl import has_table

#: btt's phases in its table order (Q2Q_all is btt's all-device Q2Q).
PHASES = ("Q2Q", "Q2A", "Q2G", "S2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C")
#: The phases btt's "Device Overhead" divides by Q2C.
OVERHEAD = ("Q2G", "G2I", "Q2M", "I2D", "D2C")
#: Latency histogram bucket edges, in ms.
BUCKETS_MS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000)

# The three percentiles from one sort of each group (a list argument), not three.
_PHASE_STATS = """
SELECT dev, phase, n, min_ns, avg_ns, q[1] AS p50_ns, q[2] AS p90_ns, q[3] AS p99_ns, max_ns, total_ns FROM (
  SELECT {key} AS dev, phase, count(*) AS n, min(ns) AS min_ns, avg(ns) AS avg_ns,
         quantile_cont(ns, [0.5, 0.9, 0.99]) AS q, max(ns) AS max_ns, sum(ns) AS total_ns
  FROM {source} WHERE phase IN ({phases}) {where}
  GROUP BY ALL
) ORDER BY dev, phase
"""

# btt follows a device from its first Q or A record, and ignores zero-byte
# records and packet commands.
_FOLLOWED = """
WITH start AS (SELECT dev, min(id) AS first_id FROM blk_events WHERE action IN ('Q', 'A') GROUP BY dev)
SELECT e.* FROM blk_events e JOIN start s ON e.dev = s.dev AND e.id >= s.first_id
WHERE NOT e.pc AND e.bytes > 0
"""

# btt's seek distance (seek.c, seek_dist): 0 when the request overlaps the
# previous one, else the gap from the previous end (forward) or start (back).
# The mode is the most frequent distance; of several equally frequent ones (600,000
# random reads: hundreds of distances seen twice), the shortest, so that it is the
# same on every run (DuckDB's mode() picks any).
# Sectors are u64 (UBIGINT): HUGEINT holds them and their differences, where BIGINT
# fails from sector 2^63 on ("Type UINT64 with value 9223372036854775816 can't be cast").
_SEEKS = """
WITH r AS (
  SELECT dev, action, sector::HUGEINT AS s, sector::HUGEINT + nr_sectors AS e,
         coalesce(lag(sector::HUGEINT) OVER w, 0) AS ps, coalesce(lag(sector::HUGEINT + nr_sectors) OVER w, 0) AS pe
  FROM ({followed}) WHERE action IN ('D', 'Q') WINDOW w AS (PARTITION BY dev, action ORDER BY id)
), d AS (
  SELECT dev, action, abs(CASE WHEN (ps <= s AND s <= pe) OR (ps <= e AND e <= pe) THEN 0
                               WHEN s > pe THEN s - pe ELSE s - ps END) AS dist FROM r
), k AS (
  SELECT dev, action, dist, count(*) AS n FROM d GROUP BY ALL
), m AS (
  SELECT dev, action, first(dist ORDER BY n DESC, dist) AS mode, max(n) AS mode_count FROM k GROUP BY ALL
)
SELECT d.action, d.dev, count(*) AS nseeks, avg(dist) AS mean, quantile_disc(dist, 0.5) AS median,
       any_value(m.mode) AS mode, any_value(m.mode_count) AS mode_count
FROM d JOIN m ON m.dev = d.dev AND m.action = d.action
GROUP BY d.action, d.dev ORDER BY d.dev
"""


def _rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def has_blktrace(con) -> bool:
    return has_table(con, "io_phases")


# D2C per issued request: each D matched to the completion of the same device and start
# sector at or after it, and before the next D there. btt's D2C instead follows each
# queued bio (Q) to the D and C that cover it, and has none for a bio it lost track of
# (replaced in its tree by a later Q at the same sector, split, or remapped). On
# sample_traces/blk-ext4-fsync: 1,912 requests, every completed data request, where btt
# has 2,082 values and none for the 1.25 MiB stream writes that took up to 137 ms
# (btt's D2C max: 28.6 ms). Zero-byte records (flushes) are left out, as btt leaves them
# out. The per-process table stays btt's (by the task that queued each bio).
_REQUEST_D2C = """
WITH d AS (SELECT id, ts, dev, sector, lead(ts) OVER (PARTITION BY dev, sector ORDER BY ts, id) AS next_d
           FROM blk_events WHERE action = 'D' AND NOT pc AND bytes > 0),
     c AS (SELECT ts, dev, sector FROM blk_events WHERE action = 'C' AND NOT pc AND bytes > 0)
SELECT d.dev, 'D2C' AS phase, c.ts - d.ts AS ns
FROM d ASOF JOIN c ON c.dev = d.dev AND c.sector = d.sector AND c.ts >= d.ts
WHERE d.next_d IS NULL OR c.ts <= d.next_d
"""


def io_summary(con, device: str | None = None, btt_compat: bool = False) -> dict:
    """Everything `advisor io` shows, for one device or all.

    By default a device is a remapper when the capture shows it remapping (see
    `blk_device_roles`) and D2C is measured per issued request; with `btt_compat`,
    btt's rules (majors 9, 253, 254 are remappers; D2C per queued bio), so the
    numbers equal btt's. `notes` says where and why the two differ."""
    if not has_blktrace(con):
        from advisor.io.tracepoints import tracepoint_summary  # noqa: PLC0415

        return tracepoint_summary(con, device, BUCKETS_MS)
    devices = [r[0] for r in con.execute("SELECT dev FROM blk_devices ORDER BY dev").fetchall()]
    if device is not None:
        device = device.replace(":", ",")
        if device not in devices:
            raise UsageError(f"no device {device} in this capture (devices: {', '.join(devices) or 'none'})")
        devices = [device]
    where = "AND dev = ?" if device else ""
    params = [device] if device else []
    with _phase_values(con, btt_compat, where, params) as source:
        return _summary(con, devices, source, where, params, btt_compat)


@contextlib.contextmanager
def _phase_values(con, btt_compat: bool, where: str, params):
    """The phase values the tables and the histogram are made of: btt's, with
    D2C per issued request unless btt_compat. The per-request D2C (an ASOF
    join of every D with its completion) is computed once, into a temporary
    table, rather than once per query that reads it (three)."""
    if btt_compat:
        yield "io_phases"
        return
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {_VALUES} AS SELECT dev, phase, ns FROM io_phases WHERE phase <> 'D2C' {where}"
        f" UNION ALL SELECT * FROM ({_REQUEST_D2C}) WHERE true {where}",
        params * 2,
    )
    try:
        yield _VALUES
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_VALUES}")


#: The temporary table of `_phase_values` (in DuckDB's in-memory temp schema: a
#: read-only store is never written).
_VALUES = "temp.io_phase_values"


def _summary(con, devices: list[str], source: str, where: str, params, btt_compat: bool) -> dict:
    phases = ", ".join(f"'{p}'" for p in PHASES)
    per_dev = _rows(con, _PHASE_STATS.format(key="dev", source=source, phases=phases, where=where), params)
    followed = _FOLLOWED + (" AND e.dev = ?" if where else "")
    rows = {
        "devices": devices,
        "per_dev": per_dev,
        "all_phases": _rows(
            con,
            _PHASE_STATS.format(key="'ALL'", source=source, phases=phases.replace("'Q2Q'", "'Q2Q_all'"), where=where),
            params,
        ),
        "per_dev_btt": per_dev if btt_compat else _rows(
            con, _PHASE_STATS.format(key="dev", source="io_phases", phases=phases, where=where), params),
        "roles": _rows(con, f"SELECT dev, role, remapper, btt_remapper FROM blk_device_roles WHERE true {where} ORDER BY dev", params),
        "seeks": _rows(con, _SEEKS.format(followed=followed), params),
        "merges": _merges(con, followed, params),
        "depth": _rows(con, f"SELECT * FROM blk_devices WHERE true {where} ORDER BY dev", params),
        "throughput": _throughput(con, where, params),
        "histogram": _histogram(con, source, where, params),
        "processes": _rows(
            con,
            "SELECT coalesce(comm, 'pid ' || pid) AS process, phase, count(*) AS n, avg(ns) AS avg_ns, max(ns) AS max_ns"
            f" FROM io_phases WHERE phase IN ('Q2C', 'D2C') {where} GROUP BY ALL ORDER BY process, phase",
            params,
        ),
        "clocks": [v for (v,) in con.execute("SELECT value FROM trace_info WHERE key = 'blktrace_clock_alignment'").fetchall()],
    }
    return compose(rows, btt_compat)


def compose(rows: dict, btt_compat: bool) -> dict:
    """The summary from the rows of its queries: `_summary`'s over a store, or the
    parser's own (advisor/io/fast.py), which has the same rows."""
    per_dev, per_dev_btt, roles = rows["per_dev"], rows["per_dev_btt"], rows["roles"]
    remappers = {r["dev"] for r in roles if r["btt_remapper" if btt_compat else "remapper"]}
    all_phases = [{**r, "phase": "Q2Q"} if r["phase"] == "Q2Q_all" else r for r in rows["all_phases"]]
    seeks: dict[str, list[dict]] = {"d2d": [], "q2q": []}
    for row in rows["seeks"]:
        row = dict(row)
        seeks["d2d" if row.pop("action") == "D" else "q2q"].append(row)
    return {
        "devices": rows["devices"],
        "phases": per_dev,
        "all_devices": all_phases,
        # Shares of the Q2C time of the same bios: btt's per-bio values in both modes.
        "overhead": [r for r in _overhead(per_dev_btt) if r["dev"] not in remappers],
        "merges": rows["merges"],
        "depth": [{**r, "avg_active_at_q": None} if r["dev"] in remappers else r for r in rows["depth"]],
        "throughput": rows["throughput"],
        "seeks": seeks,
        "histogram": rows["histogram"],
        "processes": rows["processes"],
        "mode": "btt-compat" if btt_compat else "capture",
        "roles": roles,
        "notes": _notes(roles, per_dev, per_dev_btt, btt_compat) + [f"clocks: {v}" for v in rows["clocks"]],
    }


def _notes(roles: list[dict], per_dev: list[dict], per_dev_btt: list[dict], btt_compat: bool) -> list[str]:
    """Where this mode's numbers differ from the other's, and why."""
    notes = []
    for r in roles:
        if r["remapper"] == r["btt_remapper"]:
            continue
        major = r["dev"].split(",")[0]
        btt_view = (f"btt counts {r['dev']} as a remapper because of its major {major} (btt/devmap.c remapper_dev: 9, 253, 254):"
                    " its Q2Q/Q2C only as Q2Qdm/Q2Cdm, no device overhead, no active requests at Q")
        if btt_compat:
            notes.append(f"{r['dev']}: {btt_view}; the capture shows it is a {r['role']} (the default mode measures it so)")
        else:
            notes.append(f"{r['dev']}: measured as a {r['role']}; {btt_view} (--btt-compat)")
    if not btt_compat:
        # btt's D2C values per device, counted by the btt-mode phase table already read.
        btt_d2c = {r["dev"]: r["n"] for r in per_dev_btt if r["phase"] == "D2C"}
        for r in per_dev:
            if r["phase"] == "D2C" and btt_d2c.get(r["dev"]) != r["n"]:
                notes.append(
                    f"{r['dev']}: D2C per issued request ({r['n']:,} D records with their completion); btt follows"
                    f" each queued bio to the D and C covering it ({btt_d2c.get(r['dev'], 0):,} values) (--btt-compat)")
    return notes


def _overhead(per_dev: list[dict]) -> list[dict]:
    """btt's Device Overhead: each phase's total time as a share of Q2C's."""
    by_dev: dict[str, dict[str, int]] = {}
    for r in per_dev:  # one pass: a capture can name hundreds of thousands of devices
        by_dev.setdefault(r["dev"], {})[r["phase"]] = r["total_ns"]
    out = []
    for dev, totals in sorted(by_dev.items()):
        q2c = totals.get("Q2C")
        if not q2c:
            continue
        out.append({"dev": dev, **{p: 100.0 * (totals.get(p) or 0) / q2c for p in OVERHEAD}})
    return out


def _merges(con, followed: str, params) -> list[dict]:
    """btt's Device Merge Information: #Q / #D, and the sizes (sectors) of
    what completed (btt tallies them at C: update_blks in handle_complete).
    btt raises #Q to #D when fewer Qs than Ds were seen (splits, remaps)."""
    return _rows(
        con,
        "SELECT d.dev, greatest(d.btt_queued, d.btt_issued) AS q, d.btt_issued AS d,"
        " greatest(d.btt_queued, d.btt_issued) / nullif(d.btt_issued, 0) AS ratio,"
        " s.blk_min, s.blk_total / nullif(d.btt_issued, 0) AS blk_avg, s.blk_max, s.blk_total FROM blk_devices d JOIN ("
        "  SELECT dev, min(nr_sectors) AS blk_min, max(nr_sectors) AS blk_max,"
        f"  sum(nr_sectors) AS blk_total FROM ({followed}) WHERE action = 'C' GROUP BY dev) s ON s.dev = d.dev"
        " WHERE d.btt_issued > 0 ORDER BY d.dev",
        params,
    )


def _throughput(con, where: str, params) -> list[dict]:
    """Completed I/O per device and kind (blkparse counts bytes at C). Flushes
    complete with no data (RWBS "FN"): counted apart, not as reads."""
    return _rows(
        con,
        "WITH span AS (SELECT dev, greatest(last_ts - first_ts, 1) AS ns FROM blk_devices)"
        " SELECT c.dev, CASE WHEN c.bytes = 0 THEN 'no data' WHEN c.rwbs LIKE '%D%' THEN 'discard'"
        " WHEN c.write THEN 'write' ELSE 'read' END AS direction,"
        " count(*) AS completions, sum(c.bytes) AS bytes, count(*) * 1e9 / any_value(s.ns) AS iops,"
        " sum(c.bytes) * 1e9 / any_value(s.ns) AS bytes_per_s"
        f" FROM blk_events c JOIN span s ON s.dev = c.dev WHERE c.action = 'C' AND NOT c.pc {where.replace('dev', 'c.dev')}"
        " GROUP BY ALL ORDER BY c.dev, direction",
        params,
    )


def _histogram(con, source: str, where: str, params) -> list[dict]:
    """D2C and Q2C counts per latency bucket (ms upper edges; None = above the last)."""
    edges = ", ".join(str(b) for b in BUCKETS_MS)
    return _rows(
        con,
        f"WITH b AS (SELECT phase, ns / 1e6 AS ms, list_filter([{edges}]::DOUBLE[], lambda x: x >= ns / 1e6)[1] AS le_ms"
        f" FROM {source} WHERE phase IN ('D2C', 'Q2C') {where})"
        " SELECT phase, le_ms, count(*) AS n FROM b GROUP BY ALL ORDER BY phase, le_ms NULLS LAST",
        params,
    )
