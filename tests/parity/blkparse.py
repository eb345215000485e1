"""Compare a store's blktrace tables with blkparse and btt on the same input.

The blkparse default output is parsed here independently of the advisor's
own blkparse-text parser: every event line must match our row of the same
position (device, CPU, sequence, time since the first event, pid, action,
RWBS and the action's own tail), and blkparse's per-CPU statistics must
equal the same sums over `blk_events`.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

HEAD = re.compile(
    r"^\s*(?P<maj>\d+),(?P<min>\d+)\s+(?P<cpu>\d+)\s+(?P<seq>\d+)\s+(?P<s>\d+)\.(?P<ns>\d{9})\s+(?P<pid>\d+)\s+(?P<act>\S+)\s+(?P<rwbs>\S+)\s?(?P<tail>.*)$"
)
SECTORS = re.compile(r"^(?P<sector>\d+) \+ (?P<n>\d+)")


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        import pytest

        pytest.fail(f"{name} is not installed: blktrace parity tests need it (apt-get install blktrace)")
    return path


def blkparse(inputs: list[str], cwd: Path, extra: list[str] = ()) -> str:
    args = [tool("blkparse")]
    for i in inputs:
        args += ["-i", i]
    return subprocess.run(args + list(extra), cwd=cwd, capture_output=True, text=True, errors="surrogateescape", check=True).stdout


def merged_dump(inputs: list[str], where: Path, tmp: Path) -> Path:
    """`blkparse -d`: the one-file, time-sorted form btt reads."""
    merged = tmp / "merged.bin"
    args = [tool("blkparse"), *[a for i in inputs for a in ("-i", i)], "-D", str(where.resolve()), "-d", str(merged), "-O"]
    subprocess.run(args, cwd=tmp, check=True, capture_output=True)
    return merged


def run_btt(merged: Path, tmp: Path) -> str:
    """`btt -A` (every table, per device too) on a merged dump; btt writes
    side files into its working directory, so it runs in `tmp`."""
    return subprocess.run([tool("btt"), "-A", "-i", str(merged)], cwd=tmp, capture_output=True, text=True, check=True).stdout


@dataclass
class Result:
    lines: int = 0
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    actions: Counter = field(default_factory=Counter)

    def bad(self, msg: str) -> None:
        if len(self.mismatches) < 40:
            self.mismatches.append(msg)


def _expect_tail(row: dict, act: str) -> str:
    """The tail blkparse prints for our row (blkparse_fmt.c, process_default)."""
    comm = row["comm"] if row["comm"] is not None else "(null)"
    n = row["nr_sectors"]
    sec = row["sector"]
    if act == "m":
        return row["message"]
    if act in ("C", "R"):
        if row["pc"]:
            return f"[{row['error']}]"
        return f"{sec} + {n} [{row['error']}]" if n else f"{sec} [{row['error']}]"
    if act in ("D", "I", "Q", "B") and row["pc"]:
        return f"{row['bytes']} [{comm}]"
    if act in ("M", "F", "G", "S", "D", "I", "Q", "B"):
        return f"{sec} + {n} [{comm}]" if n else f"[{comm}]"
    if act == "P":
        return f"[{comm}]"
    if act in ("U", "UT"):
        return f"[{comm}] {row['unplug_depth']}"
    if act == "A":
        maj, mi = row["remap_from_dev"].split(",")
        return f"{sec} + {n} <- ({maj},{mi}) {row['remap_from_sector']}"
    if act == "X":
        return f"{sec} / {row['split_sector']} [{comm}]"
    return "?"


def compare_events(store: Path, text: str, cgroup_stripped: bool = False) -> Result:
    """Line by line. blkparse 1.2.0 prints nothing for records that carry a
    cgroup id (Linux 4.14+ sets __BLK_TA_CGROUP; blkparse learnt it in 2020),
    so those rows are left out of the comparison, unless blkparse was given
    the capture with the cgroup ids taken out (`strip_cgroup`)."""
    res = Result()
    where = "" if cgroup_stripped else "WHERE cgroup IS NULL"
    # blkparse's times count from the first record it sorts; it does not
    # sort cgroup-flagged messages (taken for unknown notes).
    genesis = "min(ts)" if cgroup_stripped else "min(ts) FILTER (WHERE NOT (action = 'm' AND cgroup IS NOT NULL))"
    with duckdb.connect(str(store), read_only=True) as con:
        cur = con.execute(f"SELECT * FROM (SELECT *, ts - {genesis} OVER () AS rel FROM blk_events) {where} ORDER BY id")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    it = iter(rows)
    for line in text.splitlines():
        m = HEAD.match(line)
        if not m:
            continue
        res.lines += 1
        res.actions[m["act"]] += 1
        row = next(it, None)
        if row is None:
            res.bad(f"blkparse has more events than we do, from {line!r}")
            break
        res.compared += 1
        where = f"row {row['id']} ({line.strip()[:100]!r})"
        want = {
            "dev": f"{m['maj']},{m['min']}",
            "cpu": int(m["cpu"]),
            "rel": int(m["s"]) * 1_000_000_000 + int(m["ns"]),
            "pid": int(m["pid"]),
            "action": m["act"],
            "rwbs": m["rwbs"],
        }
        # A remap prints its target device; messages print pid and sequence 0.
        got = {k: row[k] for k in want}
        if m["act"] == "A":
            got["dev"] = row["remap_to_dev"]
        if m["act"] == "m":
            got["pid"] = 0
        if got != want:
            res.bad(f"{where}: ours {got}, blkparse {want}")
        if m["act"] != "m" and int(m["seq"]) != row["seq"]:
            res.bad(f"{where}: sequence ours {row['seq']}")
        tail = m["tail"].rstrip() if m["act"] != "m" else m["tail"]
        if m["act"] == "m":
            # blkparse prints "%*s" with the payload length: the text up to its NUL.
            if tail.rstrip() != (row["message"] or "").rstrip():
                res.bad(f"{where}: message ours {row['message']!r}")
        elif tail != _expect_tail(row, m["act"]):
            res.bad(f"{where}: tail ours {_expect_tail(row, m['act'])!r}, blkparse {tail!r}")
    if next(it, None) is not None:
        res.bad("we have more events than blkparse printed")
    return res


STAT = re.compile(r"\s*(?P<name>[A-Za-z][A-Za-z .]*?):\s+(?P<v>\d+)(?:,\s+(?P<kb>\d+)(?P<unit>[KMGP])iB)?")
SECTION = re.compile(r"^(?P<section>CPU\d+|Total) \((?P<label>.*)\):$")
EVENTS = re.compile(r"^Events \((?P<label>.*)\): (?P<n>[\d,]+) entries$")
SKIPS = re.compile(r"^Skips: (?P<skips>[\d,]+) forward \((?P<seqs>[\d,]+) -\s*[\d.]+%\)$")


@dataclass
class DeviceSummary:
    """blkparse's statistics for one device (labelled by its input name)."""

    sections: dict[str, dict[str, tuple]] = field(default_factory=dict)  # CPU0.. / Total → stat → (count, (KiB, unit))
    entries: int | None = None
    skips: int | None = None
    skipped_seqs: int | None = None


def parse_summary(text: str) -> dict[str, DeviceSummary]:
    """blkparse's per-device statistics, keyed by the device's input name."""
    out: dict[str, DeviceSummary] = {}
    section = last = None
    for line in text.splitlines():
        if m := SECTION.match(line):
            last = out.setdefault(m["label"], DeviceSummary())
            section = last.sections.setdefault(m["section"], {})
            continue
        if m := EVENTS.match(line):
            last = out.setdefault(m["label"], DeviceSummary())
            last.entries = int(m["n"].replace(",", ""))
        elif (m := SKIPS.match(line)) and last is not None:
            last.skips, last.skipped_seqs = int(m["skips"].replace(",", "")), int(m["seqs"].replace(",", ""))
        if not line.startswith(" "):
            section = None
            continue
        if section is None:
            continue
        for part in line.split("\t"):
            if m := STAT.match(part):
                kb = (int(m["kb"]), m["unit"]) if m["kb"] is not None else None
                section[m["name"].strip()] = (int(m["v"]), kb)
    return out


RECORD = struct.Struct("<IIQQIIIIIHH")  # struct blk_io_trace, little-endian
CGROUP_FLAG = 1 << 8  # __BLK_TA_CGROUP: an 8-byte cgroup id starts the PDU


def strip_cgroup(src: Path, dst: Path) -> int:
    """Copy a little-endian blktrace stream with the cgroup flag and id taken
    out of every record, so blkparse and btt 1.2.0 read those records too.
    Returns how many records were changed."""
    data = src.read_bytes()
    out = bytearray()
    at = changed = 0
    while at + RECORD.size <= len(data):
        h = list(RECORD.unpack_from(data, at))
        pdu = data[at + RECORD.size : at + RECORD.size + h[10]]
        at += RECORD.size + h[10]
        if h[5] & CGROUP_FLAG:
            h[5] &= ~CGROUP_FLAG
            pdu = pdu[8:]
            h[10] = len(pdu)
            changed += 1
        out += RECORD.pack(*h) + pdu
    dst.write_bytes(bytes(out))
    return changed


def first_device(files: list[Path]) -> str:
    """major,minor of the first record of a device's per-CPU files, read
    straight from the blk_io_trace header."""
    for f in files:
        head = f.read_bytes()[: RECORD.size]
        if len(head) == RECORD.size:
            dev = RECORD.unpack(head)[7]
            return f"{dev >> 20},{dev & 0xFFFFF}"
    raise AssertionError(f"no records in {files}")


# blkparse 1.2.0 does not recognise actions carrying __BLK_TA_CGROUP (see
# compare_events): it counts them as 'Events' but in no statistic, and drops
# cgroup-flagged messages altogether. {where} applies that unless the ids
# were stripped from its input.
_SUMMARY_SQL = """
WITH r AS (SELECT * FROM blk_events WHERE dev = ? {where})
SELECT cpu,
  count(*) FILTER (WHERE action = 'Q' AND NOT pc AND NOT write) AS rq, sum(bytes >> 10) FILTER (WHERE action = 'Q' AND NOT pc AND NOT write) AS rq_kb,
  count(*) FILTER (WHERE action = 'Q' AND NOT pc AND write) AS wq, sum(bytes >> 10) FILTER (WHERE action = 'Q' AND NOT pc AND write) AS wq_kb,
  count(*) FILTER (WHERE action = 'D' AND NOT pc AND NOT write) AS rd, sum(bytes >> 10) FILTER (WHERE action = 'D' AND NOT pc AND NOT write) AS rd_kb,
  count(*) FILTER (WHERE action = 'D' AND NOT pc AND write) AS wd, sum(bytes >> 10) FILTER (WHERE action = 'D' AND NOT pc AND write) AS wd_kb,
  count(*) FILTER (WHERE action = 'R' AND NOT pc AND NOT write) AS rr, count(*) FILTER (WHERE action = 'R' AND NOT pc AND write) AS wr,
  count(*) FILTER (WHERE action = 'C' AND NOT pc AND NOT write) AS rc, sum(bytes >> 10) FILTER (WHERE action = 'C' AND NOT pc AND NOT write) AS rc_kb,
  count(*) FILTER (WHERE action = 'C' AND NOT pc AND write) AS wc, sum(bytes >> 10) FILTER (WHERE action = 'C' AND NOT pc AND write) AS wc_kb,
  count(*) FILTER (WHERE action IN ('M', 'F') AND NOT write) AS rm, sum(bytes >> 10) FILTER (WHERE action IN ('M', 'F') AND NOT write) AS rm_kb,
  count(*) FILTER (WHERE action IN ('M', 'F') AND write) AS wm, sum(bytes >> 10) FILTER (WHERE action IN ('M', 'F') AND write) AS wm_kb,
  count(*) FILTER (WHERE action = 'Q' AND pc AND NOT write) AS pc_rq, sum(bytes >> 10) FILTER (WHERE action = 'Q' AND pc AND NOT write) AS pc_rq_kb,
  count(*) FILTER (WHERE action = 'Q' AND pc AND write) AS pc_wq, sum(bytes >> 10) FILTER (WHERE action = 'Q' AND pc AND write) AS pc_wq_kb,
  count(*) FILTER (WHERE action = 'D' AND pc AND NOT write) AS pc_rd, sum(bytes >> 10) FILTER (WHERE action = 'D' AND pc AND NOT write) AS pc_rd_kb,
  count(*) FILTER (WHERE action = 'D' AND pc AND write) AS pc_wd, sum(bytes >> 10) FILTER (WHERE action = 'D' AND pc AND write) AS pc_wd_kb,
  count(*) FILTER (WHERE action = 'R' AND pc AND NOT write) AS pc_rr, count(*) FILTER (WHERE action = 'R' AND pc AND write) AS pc_wr,
  count(*) FILTER (WHERE action = 'C' AND pc AND NOT write) AS pc_rc, count(*) FILTER (WHERE action = 'C' AND pc AND write) AS pc_wc,
  count(*) FILTER (WHERE action = 'U') AS io_unplugs, count(*) FILTER (WHERE action = 'UT') AS timer_unplugs
FROM r GROUP BY GROUPING SETS ((cpu), ()) ORDER BY cpu NULLS LAST
"""

_NAMES = {
    "Reads Queued": ("rq", "rq_kb"),
    "Writes Queued": ("wq", "wq_kb"),
    "Read Dispatches": ("rd", "rd_kb"),
    "Write Dispatches": ("wd", "wd_kb"),
    "Reads Requeued": ("rr", None),
    "Writes Requeued": ("wr", None),
    "Reads Completed": ("rc", "rc_kb"),
    "Writes Completed": ("wc", "wc_kb"),
    "Read Merges": ("rm", "rm_kb"),
    "Write Merges": ("wm", "wm_kb"),
    "PC Reads Queued": ("pc_rq", "pc_rq_kb"),
    "PC Writes Queued": ("pc_wq", "pc_wq_kb"),
    "PC Read Disp.": ("pc_rd", "pc_rd_kb"),
    "PC Write Disp.": ("pc_wd", "pc_wd_kb"),
    "PC Reads Req.": ("pc_rr", None),
    "PC Writes Req.": ("pc_wr", None),
    "PC Reads Compl.": ("pc_rc", None),
    "PC Writes Compl.": ("pc_wc", None),
    "IO unplugs": ("io_unplugs", None),
    "Timer unplugs": ("timer_unplugs", None),
}


def _size_cnv(kb: int) -> tuple[int, str]:
    """blkparse's size_cnv for KiB values: divide by 1000 past a million."""
    units = "KMGP"
    i = 0
    while kb > 1000 * 1000 and i < len(units) - 1:
        i += 1
        kb //= 1000
    return kb, units[i]


def compare_summary(store: Path, summary: DeviceSummary, dev: str, cgroup_stripped: bool = False) -> tuple[int, list[str]]:
    """One device's blkparse statistics against sums over our tables:
    (values compared, mismatches)."""
    bad: list[str] = []
    n = 0
    counted = "" if cgroup_stripped else "AND cgroup IS NULL"
    seen = "" if cgroup_stripped else "AND NOT (action = 'm' AND cgroup IS NOT NULL)"
    with duckdb.connect(str(store), read_only=True) as con:
        cur = con.execute(_SUMMARY_SQL.format(where=counted), [dev])
        names = [d[0] for d in cur.description]
        ours = {("Total" if r[0] is None else f"CPU{r[0]}"): dict(zip(names, r)) for r in cur.fetchall()}
        events = con.execute(f"SELECT count(*) FROM blk_events WHERE dev = ? {seen}", [dev]).fetchone()[0]
        depth = con.execute("SELECT max_depth_read, max_depth_write FROM blk_devices WHERE dev = ?", [dev]).fetchone()
        flagged = con.execute("SELECT count(*) FROM blk_events WHERE dev = ? AND cgroup IS NOT NULL", [dev]).fetchone()[0]
        gaps = con.execute(
            "SELECT count(*), coalesce(sum(count), 0) FROM blk_lost_events WHERE dev = ?", [dev]
        ).fetchone()
    if len([k for k in ours if k != "Total"]) == 1:
        ours.pop("Total")  # blkparse prints no total for one CPU
    for got, want, what in ((events, summary.entries, "Events"), (gaps[0], summary.skips, "Skips"), (gaps[1], summary.skipped_seqs, "skipped sequence numbers")):
        n += 1
        if want is None or got != want:
            bad.append(f"{dev} {what}: ours {got}, blkparse {want}")
    for section, stats in summary.sections.items():
        # A CPU whose records blkparse saw but counted in no statistic.
        mine = ours.get(section) or {k: 0 for k in names}
        for name, (count, kb) in stats.items():
            if name in ("Read depth", "Write depth"):
                if flagged and not cgroup_stripped:
                    continue  # our depth counts the records blkparse skips; compared once stripped
                want = depth[0] if name.startswith("Read") else depth[1]
                n += 1
                if count != want:
                    bad.append(f"{dev} {section} {name}: ours {want}, blkparse {count}")
                continue
            if name not in _NAMES:
                bad.append(f"{dev} {section}: unknown statistic {name!r}")
                continue
            ck, kk = _NAMES[name]
            n += 1
            if (mine[ck] or 0) != count:
                bad.append(f"{dev} {section} {name}: ours {mine[ck]}, blkparse {count}")
            if kk and kb is not None:
                n += 1
                if _size_cnv(mine[kk] or 0) != kb:
                    bad.append(f"{dev} {section} {name} KiB: ours {mine[kk]}, blkparse {kb}")
    return n, bad


BTT_ROW = re.compile(r"^\((?P<maj>\s*\d+),\s*(?P<min>\d+)\)\s+(?P<min_s>[\d.]+)\s+(?P<avg>[\d.]+)\s+(?P<max>[\d.]+)\s+(?P<n>\d+)$")
BTT_HDR = re.compile(r"^\s+(?P<name>[A-Za-z0-9]+)\s+MIN\s+AVG\s+MAX\s+N$")


def btt_per_device(text: str) -> dict[tuple[str, str], tuple]:
    """btt -A "Per Device" tables: {(dev, table): (min, avg, max, n)} as printed."""
    out = {}
    section = None
    table = None
    for line in text.splitlines():
        if line.startswith("===================="):
            section = line.strip("= ")
            continue
        if section != "Per Device":
            continue
        h = BTT_HDR.match(line)
        if h:
            table = h["name"]
            continue
        m = BTT_ROW.match(line)
        if m and table:
            dev = f"{m['maj'].strip()},{m['min']}"
            out[(dev, table)] = (m["min_s"], m["avg"], m["max"], int(m["n"]))
    return out


def compare_btt(store: Path, btt_text: str) -> tuple[int, list[str]]:
    """Our io_phases aggregates against btt's per-device tables, to the
    printed digit: btt sums nanoseconds in a u64 and prints min, max and
    (total / 1e9) / n with %13.9f, which Python's formatting reproduces."""
    theirs = btt_per_device(btt_text)
    bad = []
    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute(
            "SELECT dev, phase, any_value(btt_remapper), min(ns), sum(ns), max(ns), count(*) FROM io_phases"
            " WHERE phase <> 'Q2Q_all' GROUP BY dev, phase"
        ).fetchall()
    ours = {}
    for dev, phase, remapper, mn, total, mx, n in rows:
        table = phase + ("dm" if remapper and phase in ("Q2Q", "Q2C", "Q2A") else "")
        ours[(dev, table)] = (f"{mn / 1e9:.9f}", f"{(total / 1e9) / n:.9f}", f"{mx / 1e9:.9f}", n)
    for key, want in theirs.items():
        if key not in ours:
            bad.append(f"btt has {key} ({want[3]} values), we have none")
        elif ours[key] != want:
            bad.append(f"{key}: ours min/avg/max/N {ours[key]}, btt {want}")
    # btt prints no per-device M2D table; everything else we have must be in btt.
    for key in ours:
        if key not in theirs and key[1] != "M2D":
            bad.append(f"we have {key} ({ours[key][3]} values), btt has none")
    return len(theirs), bad
