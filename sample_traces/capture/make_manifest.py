#!/usr/bin/env python3
"""Build sample_traces/manifest.json from the sample files and measurements/.

Every number comes from a command run here (trace-cmd report / dump) or from the
tools' own output files saved by the capture scripts in measurements/.

    capture/make_manifest.py            # writes ../manifest.json

Environment: TRACE_CMD (default trace-cmd) reads v6/v7 zstd/none files;
TC_ZLIB_PREFIX (default /opt/tc-zlib) has a zlib-capable trace-cmd for the zlib file.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MEAS = ROOT / "measurements"
TRACE_CMD = os.environ.get("TRACE_CMD", "trace-cmd")
ZLIB_PREFIX = Path(os.environ.get("TC_ZLIB_PREFIX", "/opt/tc-zlib"))

# `trace-cmd report` event line: "   comm-pid [cpu]  secs.usecs: name: ..."
EVENT_RE = re.compile(r"^\s*.+?-\d+\s+(?:\(\s*[-\d]+\)\s+)?\[\d+\]\s+(?:\S+\s+)?(\d+\.\d+):\s+(\w+):")
SYS_TEXT_RE = re.compile(r"^\s*.+?-\d+\s+(?:\(\s*[-\d]+\)\s+)?\[\d+\]\s+(?:\S+\s+)?(\d+\.\d+):\s+sys_(\w+)(\(| -> )")


class Counter:
    """event name -> count, plus first/last timestamp (seconds, as printed)."""

    def __init__(self):
        self.counts, self.first, self.last = {}, None, None

    def add(self, name, ts):
        self.counts[name] = self.counts.get(name, 0) + 1
        t = float(ts)
        self.first = t if self.first is None else min(self.first, t)
        self.last = t if self.last is None else max(self.last, t)

    def span(self):
        return None if self.first is None else round(self.last - self.first, 6)
# tracefs text line: "   comm-pid  (tgid) [cpu] flags  secs.usecs: name: ..." (tgid, flags optional)
DROPPED_RE = re.compile(r"^CPU:\s*(\d+) \[(\d+) EVENTS DROPPED\]")
LOST_TEXT_RE = re.compile(r"CPU:(\d+) \[LOST (\d+) EVENTS\]")


def run(*args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout


def tc_env(compression):
    if compression != "zlib":
        return TRACE_CMD, None
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(ZLIB_PREFIX / "lib/x86_64-linux-gnu")
    return str(ZLIB_PREFIX / "bin/trace-cmd"), env


def dump_summary(path):
    # Debian's 3.1.6 cannot open zlib files; try it, then the zlib-capable build.
    for tc, env in (tc_env("zstd"), tc_env("zlib")):
        try:
            out = run(tc, "dump", "--summary", str(path), env=env)
        except (subprocess.CalledProcessError, FileNotFoundError):
            continue
        version = int(re.search(r"(\d+)\s+\[Version\]", out).group(1))
        m = re.search(r"(\S+)\s+\[Compression algorithm\]", out)
        comp = m.group(1) if m else "none"
        ks = int(re.search(r"\[Kallsyms, (\d+) bytes\]", out).group(1))
        return version, comp, ks
    raise RuntimeError(f"cannot dump {path}")


def report_counts(path, compression, extra=()):
    tc, env = tc_env(compression)
    out = run(tc, "report", *extra, str(path), env=env)
    counts, lost, markers = Counter(), 0, 0
    for line in out.splitlines():
        m = DROPPED_RE.match(line)
        if m:
            markers += 1
            lost += int(m.group(2))
            continue
        m = EVENT_RE.match(line)
        if m:
            counts.add(m.group(2), m.group(1))
    stat = run(tc, "report", "--stat", str(path), env=env)
    overrun = sum(int(x) for x in re.findall(r"^overrun: (\d+)", stat, re.M))
    return counts, lost, markers, overrun


def text_counts(path):
    counts, lost, markers = Counter(), 0, 0
    for line in path.read_text().splitlines():
        if line.startswith("#") or line.startswith("cpus="):
            continue
        m = LOST_TEXT_RE.search(line) or DROPPED_RE.match(line)
        if m:
            markers += 1
            lost += int(m.group(2))
            continue
        m = EVENT_RE.match(line)
        if m:
            counts.add(m.group(2), m.group(1))
            continue
        # tracefs prints syscall events as "sys_write(fd: ...)" / "sys_write -> 0x..."
        m = SYS_TEXT_RE.match(line)
        if m:
            counts.add(("sys_enter_" if m.group(3) == "(" else "sys_exit_") + m.group(2), m.group(1))
        elif line.strip():
            counts.unparsed = getattr(counts, "unparsed", 0) + 1
    return counts, lost, markers


def enabled_events(name):
    p = MEAS / f"{name}.record-args.txt"
    if not p.exists():
        return []
    args = p.read_text().splitlines()
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-e"]


def fio_job(path, rw):
    txt = path.read_text()
    # fio may print "fio: terminating on signal 2" before the JSON when it is stopped
    j = json.loads(txt[txt.index("{"):])["jobs"][0]
    return j, j[rw]


def us(ns):
    return round(ns / 1000.0, 1)


def pct(d, p):
    return d["percentile"][f"{p:.6f}"]


def m_fio_ext4(name):
    j, w = fio_job(MEAS / f"{name}.fio.json", "write")
    s = j["sync"]["lat_ns"]
    out = {
        "fio_write_iops": round(w["iops"], 1),
        "fio_write_clat_p99_us": us(pct(w["clat_ns"], 99)),
        "fio_write_clat_max_us": us(w["clat_ns"]["max"]),
        "fio_fsync_count": j["sync"]["total_ios"],
        "fio_fsync_lat_mean_us": us(s["mean"]),
    }
    for p in (50, 90, 99, 99.9):
        out[f"fio_fsync_lat_p{str(p).replace('.', '_')}_us"] = us(pct(s, p))
    out["fio_fsync_lat_max_us"] = us(s["max"])
    return out


def epoch_pair(path):
    t0, t1 = path.read_text().split()
    # keep the nanosecond arithmetic exact
    a = int(t0.replace(".", "")); b = int(t1.replace(".", ""))
    return round((b - a) / 1e9, 6)


def m_snapshot(name):
    _, w = fio_job(MEAS / f"{name}.fio.json", "write")
    return {
        "snapshot_wall_seconds": epoch_pair(MEAS / f"{name}.snapshot-epoch.txt"),
        "snapshot_bash_time_real_seconds": float((MEAS / f"{name}.snapshot-time.txt").read_text()),
        "fio_writer_bw_kib_per_s": w["bw"],
        "fio_writer_runtime_ms": w["runtime"],
    }


def m_sync(name):
    rates = [float(l.split()[3]) for l in (MEAS / f"{name}.fs_mark.txt").read_text().splitlines()
             if re.match(r"^\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s*$", l)]
    return {
        "sync_wall_seconds": epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
        "sync_bash_time_real_seconds": float((MEAS / f"{name}.sync-time.txt").read_text()),
        "fs_mark_files_per_s_per_iteration": rates,
        "fs_mark_files_total": 500 * len(rates),
    }


def m_dbench(name):
    txt = (MEAS / f"{name}.dbench.txt").read_text()
    m = re.search(r"Throughput ([\d.]+) MB/sec\s+(\d+) clients.*max_latency=([\d.]+) ms", txt)
    f = re.search(r"^\s*Flush\s+(\d+)\s+([\d.]+)\s+([\d.]+)", txt, re.M)
    return {
        "dbench_throughput_mb_per_s": float(m.group(1)),
        "dbench_clients": int(m.group(2)),
        "dbench_max_latency_ms": float(m.group(3)),
        "dbench_flush_count": int(f.group(1)),
        "dbench_flush_avg_latency_ms": float(f.group(2)),
        "dbench_flush_max_latency_ms": float(f.group(3)),
    }


def m_stable(name):
    out = {"stable_writes": int((MEAS / f"{name}.stable_writes.txt").read_text())}
    for tag, fn in (("", f"{name}.fio.json"), ("control_sw1_untraced_", f"{name}.control-sw1.fio.json"),
                    ("control_sw0_untraced_", f"{name}.control-sw0.fio.json")):
        p = MEAS / fn
        if not p.exists():
            continue
        _, w = fio_job(p, "write")
        c = w["clat_ns"]
        out[f"{tag}fio_write_iops"] = round(w["iops"], 1)
        out[f"{tag}fio_write_clat_mean_us"] = us(c["mean"])
        out[f"{tag}fio_write_clat_p50_us"] = us(pct(c, 50))
        out[f"{tag}fio_write_clat_p99_us"] = us(pct(c, 99))
        out[f"{tag}fio_write_clat_p99_9_us"] = us(pct(c, 99.9))
        out[f"{tag}fio_write_clat_max_us"] = us(c["max"])
    return out


def m_tracefs(path):
    m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", path.read_text())
    return {"tracefs_entries_in_buffer": int(m.group(1)), "tracefs_entries_written": int(m.group(2))}


UNAME_A = (MEAS / "fio-ext4-v7-zstd.uname.txt").read_text().strip()
KERNEL = UNAME_A.split()[2]
TOOLS = {
    "dbench-btrfs-v7-zlib.dat": "trace-cmd 3.1.6 record, then upstream trace-cmd 3.3.4 convert --compression zlib",
    "tracefs-ext4.dat": "tracefs (echo > events/*/enable) + trace-cmd 3.1.6 extract",
    "tracefs-ext4.trace.txt": "cat /sys/kernel/tracing/trace",
    "tracefs-ext4.noirq.trace.txt": "cat /sys/kernel/tracing/trace (options/irq-info=0, record-tgid=0)",
    "tracefs-ext4.trace_pipe.txt": "timeout 2 cat /sys/kernel/tracing/trace_pipe",
    "tracefs-ext4.report.txt": "trace-cmd 3.1.6 report",
    "tracefs-ext4.report-raw.txt": "trace-cmd 3.1.6 report -t -R",
}
SCRIPTS = {
    "fio-ext4-v7-zstd.dat": "capture/01-fio-ext4-v7-zstd.sh",
    "snapshot-btrfs-v7-none.dat": "capture/02-snapshot-btrfs-v7-none.sh",
    "sync-xfs-v6.dat": "capture/03-sync-xfs-v6.sh",
    "dbench-btrfs-v7-zstd.dat": "capture/04-dbench-btrfs-v7-zstd.sh",
    "dbench-btrfs-v7-zlib.dat": "capture/05-dbench-btrfs-v7-zlib.sh",
    "stable-pages-ext4-v7-zstd.dat": "capture/06-stable-pages-ext4-v7-zstd.sh",
    "lost-events-v7-zstd.dat": "capture/07-lost-events-v7-zstd.sh",
    "tracefs-ext4.dat": "capture/08-tracefs-ext4.sh",
    "tracefs-ext4.trace.txt": "capture/08-tracefs-ext4.sh",
    "tracefs-ext4.noirq.trace.txt": "capture/08-tracefs-ext4.sh",
    "tracefs-ext4.trace_pipe.txt": "capture/08-tracefs-ext4.sh",
    "tracefs-ext4.report.txt": "capture/09-report-text.sh",
    "tracefs-ext4.report-raw.txt": "capture/09-report-text.sh",
}

W_FIO = "ext4 on 2 GiB loop (direct-io); fio psync 4k randwrite over a 256 MiB file, fsync every 32 writes, 8000 IOPS cap, 5 s"
W_SNAP = "btrfs on 4 GiB loop; fio seq buffered 4k writer (libaio qd32, 16 MB/s) in subvolume; btrfs subvolume snapshot -r after 2 s"
W_SYNC = "xfs on 2 GiB loop; fs_mark 16 KiB files (-S 0, 12x500, CPU-throttled) with sync(1) after 1 s"
W_DBENCH = "btrfs on 4 GiB loop; dbench 3 clients 4 s (client.txt, Flush=fsync)"
W_STABLE = "ext4 on 1 GiB loop with stable_writes=1; fio psync 4k sequential rewrite of a 256 KiB file, sync_file_range(WRITE) every 64 writes, 8000 IOPS cap, 4 s"
W_LOST = "raw_syscalls + sched_switch, 3x find /usr at nice -20 for 1 s, -b 16, trace-cmd at nice 19: deliberate ring-buffer overruns"
W_TRACEFS = "ext4 on 1 GiB loop; dd 32 MiB (64k blocks) + sync; events enabled directly in tracefs"

FILES = [
    # file, kind, workload, paired_with, events-from, measurements
    ("fio-ext4-v7-zstd.dat", "trace.dat", W_FIO, None, "fio-ext4-v7-zstd", m_fio_ext4),
    ("snapshot-btrfs-v7-none.dat", "trace.dat", W_SNAP, None, "snapshot-btrfs-v7-none", m_snapshot),
    ("sync-xfs-v6.dat", "trace.dat", W_SYNC, None, "sync-xfs-v6", m_sync),
    ("dbench-btrfs-v7-zstd.dat", "trace.dat", W_DBENCH, "dbench-btrfs-v7-zlib.dat", "dbench-btrfs-v7-zstd", m_dbench),
    ("dbench-btrfs-v7-zlib.dat", "trace.dat", W_DBENCH + " (same trace as the zstd file, converted)",
     "dbench-btrfs-v7-zstd.dat", "dbench-btrfs-v7-zstd", lambda n: m_dbench("dbench-btrfs-v7-zstd")),
    ("stable-pages-ext4-v7-zstd.dat", "trace.dat", W_STABLE, None, "stable-pages-ext4-v7-zstd", m_stable),
    ("lost-events-v7-zstd.dat", "trace.dat", W_LOST, None, "lost-events-v7-zstd", None),
    ("tracefs-ext4.dat", "trace.dat", W_TRACEFS + "; same ring buffer as tracefs-ext4.trace.txt (trace-cmd extract)",
     "tracefs-ext4.trace.txt", "tracefs-ext4", None),
    ("tracefs-ext4.trace.txt", "tracefs-text", W_TRACEFS + "; cat trace, irq-info=1, record-tgid=1",
     "tracefs-ext4.dat", "tracefs-ext4", "tracefs"),
    ("tracefs-ext4.noirq.trace.txt", "tracefs-text", W_TRACEFS + "; same buffer, cat trace with irq-info=0, record-tgid=0",
     "tracefs-ext4.dat", "tracefs-ext4", "tracefs"),
    ("tracefs-ext4.trace_pipe.txt", "trace_pipe-text", W_TRACEFS + "; a second, separate run read live with timeout 2 cat trace_pipe (record-tgid=1, irq-info=1)",
     None, "tracefs-ext4", None),
    ("tracefs-ext4.report.txt", "report-text", "trace-cmd report -i tracefs-ext4.dat (Debian trace-cmd 3.1.6)",
     "tracefs-ext4.dat", "tracefs-ext4", None),
    ("tracefs-ext4.report-raw.txt", "report-raw-text", "trace-cmd report -t -R -i tracefs-ext4.dat (Debian trace-cmd 3.1.6)",
     "tracefs-ext4.dat", "tracefs-ext4", None),
]


def main():
    entries = []
    for fname, kind, workload, paired, evname, meas in FILES:
        path = ROOT / fname
        e = {"file": fname, "kind": kind, "bytes": path.stat().st_size}
        if kind == "trace.dat":
            ver, comp, ks = dump_summary(path)
            counts, lost, markers, overrun = report_counts(path, comp)
            e.update(file_version=ver, compression=comp, kallsyms_masked=(ks == 0), kallsyms_bytes=ks)
        elif kind in ("report-text", "report-raw-text"):
            counts, lost, markers = text_counts(path)
            overrun = None
            e.update(file_version=None, compression=None, kallsyms_masked=False)
        else:
            counts, lost, markers = text_counts(path)
            overrun = None
            e.update(file_version=None, compression=None, kallsyms_masked=False)
        e.update(paired_with=paired, kernel=KERNEL, workload=workload,
                 events=enabled_events(evname),
                 event_count=sum(counts.counts.values()),
                 lost_events=lost, lost_event_markers=markers,
                 trace_span_seconds=counts.span(),
                 event_counts=dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])))
        if getattr(counts, "unparsed", 0):
            e["unparsed_lines"] = counts.unparsed
        e["uname_a"] = UNAME_A
        e["tool"] = TOOLS.get(fname, "trace-cmd 3.1.6 (Debian 12) record")
        e["capture_script"] = SCRIPTS[fname]
        if overrun is not None:
            e["cpu_stats_overrun"] = overrun
        if meas == "tracefs":
            e["measurements"] = m_tracefs(path)
        elif meas:
            e["measurements"] = meas(evname)
        else:
            e["measurements"] = {}
        if fname == "lost-events-v7-zstd.dat":
            e["measurements"] = {"events_dropped_markers": markers, "events_dropped_sum": lost,
                                 "cpu_stats_overrun_sum": overrun}
        entries.append(e)
        print(f"{fname}: {e['bytes']} bytes, {e['event_count']} events, lost {lost} ({markers} markers)",
              file=sys.stderr)
    (ROOT / "manifest.json").write_text(json.dumps(entries, indent=1) + "\n")


if __name__ == "__main__":
    main()
