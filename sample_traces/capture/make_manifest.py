#!/usr/bin/env python3
"""Build sample_traces/manifest.json from the sample files and measurements/.

Every number comes from a command run here (trace-cmd report / dump) or from the
tools' own output files saved by the capture scripts in measurements/.

    capture/make_manifest.py            # writes ../manifest.json
    capture/make_manifest.py --only all-events-ext4-v7-zstd.dat   # adds/replaces that entry

The blktrace captures (10-13, recorded in shared/lab/vm-run's VM) add entries of kinds
"blktrace" (one per-CPU set: "file" is the blkparse basename, "files" lists the set),
"blkparse-text", "blktrace-merged" (blkparse -d), "btt-text" and their paired "trace.dat";
blktrace binaries are decoded here record by record (see blk_decode).

Environment: TRACE_CMD (default trace-cmd) reads v6/v7 zstd/none files;
TC_ZLIB_PREFIX (default /opt/tc-zlib) has a zlib-capable trace-cmd for the zlib file.
"""
import json
import os
import re
import struct
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



def merge_entries(mine: list[dict]) -> None:
    """Replace these entries (by file name) in manifest.json where they are and append the
    new ones; every other entry keeps its place."""
    path = ROOT / "manifest.json"
    by_name = {e["file"]: e for e in mine}
    old = json.loads(path.read_text())
    kept = {e["file"] for e in old}
    merged = [by_name.get(e["file"], e) for e in old] + [e for e in mine if e["file"] not in kept]
    path.write_text(json.dumps(merged, indent=1) + "\n")

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
        # v7: '[buffer "", "mono" clock, ...]'; v6: '[Tracing clock]' then '[local]' on the next line
        m = re.search(r'"(\w+)" clock', out) or re.search(r"\[Tracing clock\]\s*\[(\w+)\]", out)
        clock = m.group(1) if m else None
        return version, comp, ks, clock
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


def m_sync_epoch(name):
    """Capture 46: the sync's start and end from outside the trace (date +%s.%N)."""
    t0, t1 = (MEAS / f"{name}.sync-epoch.txt").read_text().split()
    return {"sync_wall_seconds": epoch_pair(MEAS / f"{name}.sync-epoch.txt"), "sync_epoch_start": t0, "sync_epoch_end": t1}


def m_snapshot(name):
    _, w = fio_job(MEAS / f"{name}.fio.json", "write")
    # written by capture/snapshot-ioctl: CLOCK_MONOTONIC/CLOCK_REALTIME read around the ioctl
    io = json.loads((MEAS / f"{name}.snapshot-ioctl.json").read_text())
    return {
        "snapshot_ioctl_ns": io["ioctl_ns"],
        "snapshot_ioctl_mono_start_ns": io["mono_start_ns"],
        "snapshot_ioctl_mono_end_ns": io["mono_end_ns"],
        "snapshot_ioctl_real_start_ns": io["real_start_ns"],
        "snapshot_ioctl_real_end_ns": io["real_end_ns"],
        "snapshot_ioctl_cmd": io["cmd"],
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


def stat_fields(line):
    """'loop_stat <17 numbers of /sys/block/X/stat>' -> the numbers"""
    return [int(x) for x in line.split()[1:]]


def snap_file(path):
    """capture 16's before/after snapshot: 'loop_stat N...' then 'sysfs-file key value' / 'sysfs-file value'."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts[0] == "loop_stat":
            out["loop_stat"] = stat_fields(line)
        elif parts[0] == "commit_stats":
            out[f"commit_stats.{parts[1]}"] = int(parts[2])
        else:
            out[parts[0]] = int(parts[1])
    return out


def m_untar(name):
    before, after = snap_file(MEAS / f"{name}.before.txt"), snap_file(MEAS / f"{name}.after.txt")
    tarball = json.loads((MEAS / f"{name}.tarball.json").read_text())
    # /sys/block/<dev>/stat: [4] write I/Os, [6] sectors written (512 bytes, whatever the device's block size)
    wr_ios = after["loop_stat"][4] - before["loop_stat"][4]
    wr_sectors = after["loop_stat"][6] - before["loop_stat"][6]
    return {
        "tar_bash_time_real_seconds": float((MEAS / f"{name}.tar-time.txt").read_text()),
        "tar_wall_seconds": epoch_pair(MEAS / f"{name}.tar-epoch.txt"),
        "sync_wall_seconds": epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
        "tarball_files": tarball["files"],
        "tarball_file_bytes": tarball["file_bytes"],
        "tarball_file_pages_4k": tarball["file_pages_4k"],
        "tarball_files_up_to_2048_bytes": tarball["files_up_to_2048_bytes"],
        "loop_write_ios": wr_ios,
        "loop_bytes_written": wr_sectors * 512,
        "btrfs_commits": after["commit_stats.commits"] - before["commit_stats.commits"],
        "btrfs_data_bytes_used_after": after["allocation/data/bytes_used"],
        "btrfs_metadata_bytes_used_after": after["allocation/metadata/bytes_used"],
        "btrfs_metadata_disk_used_after": after["allocation/metadata/disk_used"],
    }


def vmstat(path):
    return {k: int(v) for k, v in (l.split() for l in path.read_text().splitlines())}


def m_fsync_reclaim(name):
    j, w = fio_job(MEAS / f"{name}.fio.json", "write")
    s = j["sync"]["lat_ns"]
    v0, v1 = vmstat(MEAS / f"{name}.vmstat-before.txt"), vmstat(MEAS / f"{name}.vmstat-after.txt")
    delta = lambda *keys: sum(v1.get(k, 0) - v0.get(k, 0) for k in keys)  # noqa: E731
    out = {
        "fio_write_iops": round(w["iops"], 1),
        "fio_write_count": w["total_ios"],
        "fio_fsync_count": j["sync"]["total_ios"],
        "fio_fsync_lat_mean_us": us(s["mean"]),
    }
    for p in (50, 90, 99):
        out[f"fio_fsync_lat_p{p}_us"] = us(pct(s, p))
    out["fio_fsync_lat_max_us"] = us(s["max"])
    out.update({
        # /proc/vmstat deltas over the traced workload (read at its start and end)
        "vmstat_allocstall": delta("allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable"),
        "vmstat_pgscan_kswapd": delta("pgscan_kswapd"),
        "vmstat_pgscan_direct": delta("pgscan_direct"),
        "vmstat_pgsteal_kswapd": delta("pgsteal_kswapd"),
        "vmstat_pgsteal_direct": delta("pgsteal_direct"),
        "hog": (MEAS / f"{name}.hog.txt").read_text().split("\n")[0],
    })
    return out


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
    "hostile-names-ext4-v7-zstd.dat": "capture/15-hostile-names-ext4.sh",
    "untar-btrfs-v7-zstd.dat": "capture/16-untar-btrfs-v7-zstd.sh",
    "fsync-reclaim-btrfs-v7-zstd.dat": "capture/17-fsync-reclaim-btrfs.sh (host) + capture/17-fsync-reclaim-btrfs.vm.sh (in the VM)",
    "all-events-ext4-v7-zstd.dat": "capture/27-all-events-ext4.sh",
    "instance-ext4-v7-zstd.dat": "capture/28-instance-ext4.sh",
    "instance-ext4-v6.dat": "capture/29-instance-ext4-v6.sh",
    "instance-doubled-ext4-v7-zstd.dat": "capture/32-instance-doubled-ext4.sh",
    "clock-uptime-ext4-v7-zstd.dat": "capture/33-clock-uptime-ext4.sh",
    "symbols-xfs-v7-zstd.dat": "capture/30-symbols-xfs.sh",
    "function-ext4-v7-zstd.dat": "capture/31-function-tracers.sh (host) + capture/31-function-tracers.vm.sh (in the VM)",
    "funcgraph-ext4-v7-zstd.dat": "capture/31-function-tracers.sh (host) + capture/31-function-tracers.vm.sh (in the VM)",
    "md-raid1-ext4-v7-zstd.dat": "capture/34-md-raid1-ext4.sh (host) + capture/34-md-raid1-ext4.vm.sh (in the VM)",
    "raw-syscalls-ext4-v7-zstd.dat": "capture/35-raw-syscalls-ext4.sh",
    "raw-and-named-syscalls-ext4-v7-zstd.dat": "BOTH=1 capture/35-raw-syscalls-ext4.sh",
    "fsync-fua-btrfs-v7-zstd.dat": "capture/36-fsync-fua-btrfs.sh (host) + capture/36-fsync-fua-btrfs.vm.sh (in the VM)",
    "stacktrace-ext4-v7-zstd.dat": "capture/45-stacktrace-ext4.sh",
    "sync-running-xfs-v7-zstd.dat": "VARIANT=running capture/46-sync-unfinished-xfs.sh",
    "sync-lost-xfs-v7-zstd.dat": "VARIANT=lost capture/46-sync-unfinished-xfs.sh",
}
# captures made in shared/lab/vm-run's VM (Debian 6.1), or later on another host kernel:
# their uname is their own
VM_UNAME = {"fsync-reclaim-btrfs-v7-zstd.dat": "fsync-reclaim-btrfs-v7-zstd.uname.txt",
            "all-events-ext4-v7-zstd.dat": "all-events-ext4-v7-zstd.uname.txt",
            "instance-ext4-v7-zstd.dat": "instance-ext4-v7-zstd.uname.txt",
            "instance-ext4-v6.dat": "instance-ext4-v6.uname.txt",
            "instance-doubled-ext4-v7-zstd.dat": "instance-doubled-ext4-v7-zstd.uname.txt",
            "clock-uptime-ext4-v7-zstd.dat": "clock-uptime-ext4-v7-zstd.uname.txt",
            "symbols-xfs-v7-zstd.dat": "symbols-xfs-v7-zstd.uname.txt",
            "function-ext4-v7-zstd.dat": "function-ext4-v7-zstd.uname.txt",
            "funcgraph-ext4-v7-zstd.dat": "funcgraph-ext4-v7-zstd.uname.txt",
            "md-raid1-ext4-v7-zstd.dat": "md-raid1-ext4-v7-zstd.uname.txt",
            "raw-syscalls-ext4-v7-zstd.dat": "raw-syscalls-ext4-v7-zstd.uname.txt",
            "raw-and-named-syscalls-ext4-v7-zstd.dat": "raw-and-named-syscalls-ext4-v7-zstd.uname.txt",
            "fsync-fua-btrfs-v7-zstd.dat": "fsync-fua-btrfs-v7-zstd.uname.txt",
            "stacktrace-ext4-v7-zstd.dat": "stacktrace-ext4-v7-zstd.uname.txt",
            "sync-running-xfs-v7-zstd.dat": "sync-running-xfs-v7-zstd.uname.txt",
            "sync-lost-xfs-v7-zstd.dat": "sync-lost-xfs-v7-zstd.uname.txt"}

W_FIO = "ext4 on 2 GiB loop (direct-io); fio psync 4k randwrite over a 256 MiB file, fsync every 32 writes, 8000 IOPS cap, 5 s"
W_SNAP = ("btrfs on 4 GiB loop; fio seq buffered 4k writer (libaio qd32, 16 MB/s) in subvolume; after 2 s "
          "capture/snapshot-ioctl /mnt/sub /mnt/snap OUT.json (read-only snapshot: BTRFS_IOC_SNAP_CREATE_V2 issued "
          "by the script itself and timed with CLOCK_MONOTONIC around the ioctl); fio stopped 0.5 s later")
W_SYNC = "xfs on 2 GiB loop; fs_mark 16 KiB files (-S 0, 12x500, CPU-throttled) with sync(1) after 1 s"
W_DBENCH = "btrfs on 4 GiB loop; dbench 3 clients 4 s (client.txt, Flush=fsync)"
W_STABLE = "ext4 on 1 GiB loop with stable_writes=1; fio psync 4k sequential rewrite of a 256 KiB file, sync_file_range(WRITE) every 64 writes, 8000 IOPS cap, 4 s"
W_LOST = "raw_syscalls + sched_switch, 3x find /usr at nice -20 for 1 s, -b 16, trace-cmd at nice 19: deliberate ring-buffer overruns"
W_HOSTILE = ("ext4 on 1 GiB loop, bdi strict_limit with max_bytes 1 MiB; two python writers (16 MiB each, 64 KiB writes, fsync "
             "every 4 MiB, then sync) executed as .../hostile/<script>alert(1)</script> and .../hostile/Tom & Jerry's and "
             "renamed with PR_SET_NAME to <script>alert(1)</script> (comm keeps 15 bytes) and Tom & \"Jerry's\"")
W_UNTAR = ("btrfs (defaults) on a fresh 1 GiB loop; tar -xf of a generated source-tree-like tarball (20,000 text files, "
           "110 MB, capture/make-src-tarball.py) then sync: metadata reservations of the dirty files make space reclaim "
           "flush delalloc (btrfs_flush_space FLUSH_DELALLOC*)")
W_FSYNC_RECLAIM = ("VM (2 GiB, Debian 6.1); btrfs on the 2 GiB scratch disk; before tracing a tmpfs hog leaves ~300 MB "
                   "available; traced: fio psync 4k randwrite over a 96 MiB file, fsync every 4 writes, 200 IOPS cap, 20 s, and "
                   "from 1 s in a reader streaming the scratch disk's block device through the page cache until fio ends "
                   "(kswapd reclaim during the fsyncs; no direct reclaim happened)")
W_TRACEFS = "ext4 on 1 GiB loop; dd 32 MiB (64k blocks) + sync; events enabled directly in tracefs"
W_ALL = ("trace-cmd record -e all (every event of every subsystem, unfiltered, the whole machine); ext4 on 1 GiB "
         "loop; dd 32 MiB (64k blocks) with fsync, find /usr/share -maxdepth 3 (stat of every entry), sync")
W_INSTANCE = ("trace-cmd record -e sched:sched_switch -B wa -e writeback -e block: sched_switch in the top buffer, the "
              "writeback and block subsystems in trace instance wa (unfiltered, the whole machine); ext4 on 1 GiB loop; "
              "dd 12.5 MiB (64k blocks) with fsync, sync")
W_SYMBOLS = ("trace-cmd record -e xfs -e workqueue -e writeback (unfiltered, the whole machine), kallsyms kept: pointers printed "
             "as symbols (xfs caller_ip %pS, workqueue function %ps); xfs on 1 GiB loop; dd 4 MiB (64k blocks) with fsync, sync")
W_FUNCTION = ("VM (Debian 6.1, emulated); ext4 on the 2 GiB virtio scratch disk; 3 x dd 1 MiB (64k blocks, conv=fsync), sync; "
              "trace-cmd record -p {tracer} -l ext4_sync_file -l file_write_and_wait_range{more} -e writeback -e block "
              "(the function tracer's events next to the writeback and block events)")
W_MD = ("VM (Debian 6.1, emulated); ext4 on md RAID1 (/dev/md0, 9,0; mdadm --level=1, no bitmap, --assume-clean) of two "
        "loop devices (7,0 and 7,1, direct I/O) whose image files sit on ext4 on the 2 GiB virtio scratch disk (254,0); "
        "dd 48 MiB (1 MiB blocks), sync, dd 16 MiB (64k blocks) with fsync; -e writeback, block_rq_insert/issue/complete, "
        "block_bio_queue, sync/fsync/fdatasync syscalls, unfiltered")


W_RAW = ("trace-cmd record -b 8192 -e raw_syscalls -e writeback -e block{more} (unfiltered, the whole machine); ext4 on 1 GiB "
         "loop; 20 x dd 1 MiB with fsync, 2 x dd 4 MiB with fdatasync, dd 96 MiB, sync")


def m_raw(name):
    t0, t1 = (float((MEAS / f"{name}.sync-{w}.txt").read_text()) for w in ("start", "end"))
    return {"sync_seconds_outside_trace": round(t1 - t0, 6), "fsync_calls": 20, "fdatasync_calls": 2, "sync_calls": 1,
            "workload_written_bytes": 124 << 20}


W_FUA = ("VM (Debian 6.1, emulated); btrfs on a memory-backed null_blk device with a volatile write cache and FUA "
         "(memory_backed=1 cache_size=64, each request completes 200 us after issue): the log commits' superblock writes "
         "are FUA writes (RWBS WFSM); fio 2 jobs of 4 KiB buffered random writes over 16 MiB files, fsync every 8 writes, "
         "6 s; -e writeback -e block, btrfs_sync_file, the fsync syscalls, unfiltered")


def m_fua(name):
    out = {}
    for i, j in enumerate(json.loads((MEAS / f"{name}.fio.json").read_text())["jobs"]):
        s = j["sync"]["lat_ns"]
        out[f"fio_job{i}_fsync_count"] = s["N"]
        for p in (50, 99):
            out[f"fio_job{i}_fsync_lat_p{p}_us"] = us(pct(s, p))
    return out


def m_md(name):
    t0, t1 = (float(x) for x in (MEAS / f"{name}.sync-epoch.txt").read_text().split())
    return {"sync_seconds_outside_trace": round(t1 - t0, 6), "workload_written_bytes": 64 << 20}


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
    ("hostile-names-ext4-v7-zstd.dat", "trace.dat", W_HOSTILE, None, "hostile-names-ext4-v7-zstd", None),
    ("untar-btrfs-v7-zstd.dat", "trace.dat", W_UNTAR, None, "untar-btrfs-v7-zstd", m_untar),
    ("fsync-reclaim-btrfs-v7-zstd.dat", "trace.dat", W_FSYNC_RECLAIM, None, "fsync-reclaim-btrfs-v7-zstd", m_fsync_reclaim),
    ("all-events-ext4-v7-zstd.dat", "trace.dat", W_ALL, None, "all-events-ext4-v7-zstd", None),
    ("instance-ext4-v7-zstd.dat", "trace.dat", W_INSTANCE, None, "instance-ext4-v7-zstd", None),
    ("instance-ext4-v6.dat", "trace.dat", W_INSTANCE.replace("record ", "record --file-version 6 ", 1), None, "instance-ext4-v6", None),
    ("instance-doubled-ext4-v7-zstd.dat", "trace.dat",
     W_INSTANCE.replace("-e sched:sched_switch ", "-e sched:sched_switch -e block:block_rq_issue -e block:block_rq_complete ", 1)
     + "; block_rq_issue and block_rq_complete are enabled in both buffers, so each is in the file twice", None,
     "instance-doubled-ext4-v7-zstd", None),
    ("clock-uptime-ext4-v7-zstd.dat", "trace.dat",
     "trace-cmd record -C uptime (jiffies) -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync "
     "-e writeback:writeback_single_inode -e writeback:writeback_written (the whole machine); ext4 on 1 GiB loop; "
     "40 x dd 64 KiB with fsync", None, "clock-uptime-ext4-v7-zstd", None),
    ("symbols-xfs-v7-zstd.dat", "trace.dat", W_SYMBOLS, None, "symbols-xfs-v7-zstd", None),
    ("function-ext4-v7-zstd.dat", "trace.dat", W_FUNCTION.format(tracer="function", more=""), None, "function-ext4-v7-zstd", None),
    ("funcgraph-ext4-v7-zstd.dat", "trace.dat", W_FUNCTION.format(tracer="function_graph", more=" -l ext4_writepages"), None,
     "funcgraph-ext4-v7-zstd", None),
    ("md-raid1-ext4-v7-zstd.dat", "trace.dat", W_MD, None, "md-raid1-ext4-v7-zstd", m_md),
    ("raw-syscalls-ext4-v7-zstd.dat", "trace.dat", W_RAW.format(more=""), None, "raw-syscalls-ext4-v7-zstd", m_raw),
    ("raw-and-named-syscalls-ext4-v7-zstd.dat", "trace.dat",
     W_RAW.format(more=" -e syscalls:sys_enter_X -e syscalls:sys_exit_X for X in sync, fsync, fdatasync, write, pwrite64, ioctl")
     + "; every one of those calls is in the file twice: by number and by name", None, "raw-and-named-syscalls-ext4-v7-zstd", m_raw),
    ("fsync-fua-btrfs-v7-zstd.dat", "trace.dat", W_FUA, None, "fsync-fua-btrfs-v7-zstd", m_fua),
    ("stacktrace-ext4-v7-zstd.dat", "trace.dat",
     "trace-cmd record -T (a kernel stack after every event) -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync "
     "-e writeback:writeback_dirty_folio -e writeback:writeback_single_inode -e block:block_rq_issue (the whole machine); "
     "ext4 on 1 GiB loop; 40 x dd 64 KiB with fsync", None, "stacktrace-ext4-v7-zstd", None),
    ("sync-running-xfs-v7-zstd.dat", "trace.dat",
     "trace-cmd record -b 20000 -C mono -e writeback -e block -e syscalls:sys_{enter,exit}_{sync,syncfs,fsync,fdatasync} "
     "(the whole machine); xfs on 2 GiB loop (direct-io, writes capped at 24 MiB/s); a line appended to a file every "
     "50 ms throughout; dd 96 MB (1 MiB blocks), then `sync &` and the recording stopped 2 s later, while the sync "
     "still ran (its end measured outside the trace)", None, "sync-running-xfs-v7-zstd", m_sync_epoch),
    ("sync-lost-xfs-v7-zstd.dat", "trace.dat",
     "trace-cmd record -b 16 (16 KiB per CPU) -C mono -e writeback -e block "
     "-e syscalls:sys_{enter,exit}_{sync,syncfs,fsync,fdatasync} (the whole machine); xfs on 2 GiB loop (direct-io, "
     "writes capped at 24 MiB/s); dd 96 MB (1 MiB blocks), fs_mark creating 20,000 files of 4 KiB (-S 0) and after "
     "0.3 s `sync`, timed outside the trace; the kernel overwrote events while the sync ran",
     None, "sync-lost-xfs-v7-zstd", m_sync_epoch),
]


# ---------------------------------------------------------------------------------------
# blktrace captures 10-14 (recorded inside shared/lab/vm-run's VM, Debian kernel 6.1).
# Every count below is computed here from the files themselves: the per-CPU blktrace
# files and the merged dump are decoded record by record (struct blk_io_trace, 48 bytes +
# pdu_len payload), the blkparse/btt text is counted line by line, and the trace.dat goes
# through `trace-cmd report` as above.  blktrace's and blkparse's own summaries are quoted
# from measurements/ and from the text's summary section.

BLK_HDR = struct.Struct("<IIQQIIIIIHH")   # magic seq time sector bytes action pid device cpu error pdu_len
BLK_MAGIC = 0x65617400
BLK_TC_NOTIFY = 1 << 10                    # category bits are action >> 16
BLK_TA_CGROUP = 1 << 8                     # __BLK_TA_CGROUP: 8-byte cgroup id starts the payload
BLK_ACTIONS = {1: "Q", 2: "M", 3: "F", 4: "G", 5: "S", 6: "R", 7: "D", 8: "C", 9: "P", 10: "U",
               11: "UT", 12: "I", 13: "X", 14: "B", 15: "A", 16: "abort", 17: "drv_data"}
BLK_NOTES = {0: "notify_process", 1: "notify_timestamp", 2: "m"}
# blkparse default line: "%D %2c %8s %5T.%9t %5p %2a %3d ..."
BLKPARSE_RE = re.compile(r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\S+)\s+(\S+)")


def blk_decode(paths):
    """Decode blktrace binary files -> dict of counts (by action letter, flag stripped)."""
    counts, per_file, cg_ids, devs = {}, {}, {}, {}
    cg_records = 0
    cpus = []
    versions, t_min, t_max = set(), None, None
    for p in paths:
        data = Path(p).read_bytes()
        off = n = 0
        while off < len(data):
            magic, seq, t, sector, nbytes, action, pid, dev, cpu, err, pdu = BLK_HDR.unpack_from(data, off)
            if magic & 0xFFFFFF00 != BLK_MAGIC:
                raise RuntimeError(f"{p}: bad magic {magic:#x} at offset {off}")
            versions.add(magic & 0xFF)
            low = action & 0xFFFF
            if (action >> 16) & BLK_TC_NOTIFY:
                name = BLK_NOTES.get(low & 0xFF, f"notify_{low & 0xFF}")
            else:
                name = BLK_ACTIONS.get(low & 0xFF, f"action_{low & 0xFF}")
                t_min = t if t_min is None else min(t_min, t)
                t_max = t if t_max is None else max(t_max, t)
            counts[name] = counts.get(name, 0) + 1
            cpus.append(cpu)
            if low & BLK_TA_CGROUP:
                cg_records += 1
                cid = struct.unpack_from("<Q", data, off + BLK_HDR.size)[0]
                cg_ids[str(cid)] = cg_ids.get(str(cid), 0) + 1
            d = f"{dev >> 20},{dev & 0xFFFFF}"
            devs[d] = devs.get(d, 0) + 1
            off += BLK_HDR.size + pdu
            n += 1
        if off != len(data):
            raise RuntimeError(f"{p}: trailing {len(data) - off} bytes")
        per_file[Path(p).name] = n
    return {"records": sum(per_file.values()), "per_file": per_file,
            "counts": dict(sorted(counts.items(), key=lambda kv: -kv[1])),
            "cgroup_records": cg_records, "cgroup_ids": cg_ids, "devices": devs,
            "versions": sorted(versions), "cpus": cpus,
            "span": None if t_min is None else round((t_max - t_min) / 1e9, 6)}


def blkparse_text(path):
    """Count the record lines of default-format blkparse output, and read its summary."""
    actions, by_dev, first, last, n = {}, {}, None, None, 0
    events, skips = {}, {}
    for line in path.read_text().splitlines():
        m = BLKPARSE_RE.match(line)
        if m:
            n += 1
            a, dev, t = m.group(7), f"{m.group(1)},{m.group(2)}", float(m.group(5))
            actions[a] = actions.get(a, 0) + 1
            by_dev.setdefault(dev, {})
            by_dev[dev][a] = by_dev[dev].get(a, 0) + 1
            first = t if first is None else min(first, t)
            last = t if last is None else max(last, t)
            continue
        m = re.match(r"^Events \((.+)\): (\d+) entries", line)
        if m:
            events[m.group(1)] = int(m.group(2))
        m = re.match(r"^Skips: (\d+) forward \((\d+) -\s+([\d.]+)%\)", line)
        if m:
            skips[list(events)[-1] if events else "?"] = int(m.group(1))
    return {"lines": n, "actions": dict(sorted(actions.items(), key=lambda kv: -kv[1])),
            "by_device": {d: dict(sorted(c.items(), key=lambda kv: -kv[1])) for d, c in sorted(by_dev.items())},
            "events_entries": events, "skips": skips,
            "span": None if first is None else round(last - first, 6)}


def btt_all_devices(path):
    """btt's "All Devices" table: row -> {min, avg, max, n} (seconds)."""
    out, on = {}, False
    for line in path.read_text().splitlines():
        if "All Devices" in line:
            on = True
            continue
        if on and line.startswith("====="):
            break
        m = re.match(r"^(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$", line) if on else None
        if m:
            out[m.group(1)] = {"min_s": float(m.group(2)), "avg_s": float(m.group(3)),
                               "max_s": float(m.group(4)), "n": int(m.group(5))}
    return out


def blktrace_out(name):
    """blktrace's own end-of-run summary (measurements/NAME.blktrace.out.txt), per device."""
    res, dev = {}, None
    for line in (MEAS / f"{name}.blktrace.out.txt").read_text().splitlines():
        m = re.match(r"^=== (\S+) ===", line)
        if m:
            dev = m.group(1)
            res[dev] = {"per_cpu_events": {}}
            continue
        m = re.match(r"^\s+CPU\s+(\d+):\s+(\d+) events", line)
        if m and dev:
            res[dev]["per_cpu_events"][m.group(1)] = int(m.group(2))
        m = re.match(r"^\s+Total:\s+(\d+) events \(dropped (\d+)\),\s+(\d+) KiB data", line)
        if m and dev:
            res[dev].update(events=int(m.group(1)), dropped=int(m.group(2)), kib=int(m.group(3)))
    return res


def kv_file(path):
    return kv_file_text(path.read_text())


def vm_info(name):
    txt = (MEAS / f"{name}.versions.txt").read_text()
    get = lambda k: re.search(rf"^{re.escape(k)}: (.*)$", txt, re.M).group(1)
    return {"uname_a": get("uname -a"), "kernel": get("uname -r"),
            "blktrace_V": get("blktrace -V"), "blkparse_V": get("blkparse -V"), "btt_V": get("btt -V"),
            "dpkg_blktrace": get("dpkg blktrace")}


def queue_info(name):
    """measurements/NAME.queue.txt -> {device: {setting: value}} (blank line between devices)."""
    out = {}
    for block in (MEAS / f"{name}.queue.txt").read_text().strip().split("\n\n"):
        first = block.splitlines()[0]
        dev = re.search(r"device=(\S+) dev=(\S+)", first)
        d = kv_file_text(block)
        d["dev"] = dev.group(2)
        out[dev.group(1)] = d
    return out


def kv_file_text(text):
    out = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("device="):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


W_BLK_EXT4 = ("VM (Debian 6.1, emulated): ext4 on the 2 GiB virtio scratch disk; dd 32 MiB buffered stream (no fsync, "
              "dirty_background_bytes 16 MiB) next to fio psync 4k randwrite over an 8 MiB file, fsync every 8 writes, "
              "500 IOPS cap, 3 s; then sync")
W_BLK_DM = ("VM (Debian 6.1, emulated): dm linear on partition vda1 of the 1 GiB virtio disk, vda max_sectors_kb=16, bfq; "
            "1 MiB O_DIRECT write+read through dm-0, 1 MiB buffered sequential 4k writes + fsync, fio libaio 4k "
            "randwrite over 64 KiB (16 per submit), in a cgroup-v2 child")
W_BLK_CG = W_BLK_DM + "; options/blk_cgroup=1 (records carry cgroup ids)"
W_BLK_LOST = ("VM (Debian 6.1, emulated): blktrace -b 1 -n 2 (two 1 KiB relay sub-buffers per CPU) during fio libaio "
              "4k O_DIRECT randwrite, iodepth 32, 1 s, on the raw 1 GiB virtio disk (none scheduler)")
BLK_TOOL = "blktrace 1.2.0 (Debian 12 package {dpkg}; `blktrace -V` prints \"{v}\")"

# name, capture script, blktrace basenames, paired trace.dat, workload, merged .bin kept?
BLK_SETS = [
    ("blk-ext4-fsync", "capture/10-blk-ext4-fsync.sh", ["blk-ext4-fsync"], "blk-ext4-fsync.dat", W_BLK_EXT4),
    ("blk-dm-split-remap", "capture/11-blk-dm-split-remap.sh",
     ["blk-dm-split-remap.dm-0", "blk-dm-split-remap.vda"], None, W_BLK_DM),
    ("blk-lost-events", "capture/12-blk-lost-events.sh", ["blk-lost-events"], None, W_BLK_LOST),
    ("blk-dm-cgroup", "capture/13-blk-dm-cgroup.sh", ["blk-dm-cgroup.dm-0", "blk-dm-cgroup.vda"], None, W_BLK_CG),
]


def m_blk_ext4(name):
    j, w = fio_job(MEAS / f"{name}.fio.json", "write")
    s = j["sync"]["lat_ns"]
    out = {"fio_write_iops": round(w["iops"], 1), "fio_write_ios": w["total_ios"],
           "fio_runtime_ms": w["runtime"], "fio_fsync_count": j["sync"]["total_ios"],
           "fio_fsync_lat_mean_us": us(s["mean"])}
    for p in (50, 90, 99):
        out[f"fio_fsync_lat_p{p}_us"] = us(pct(s, p))
    out["fio_fsync_lat_max_us"] = us(s["max"])
    out["dd_stream_wall_seconds"] = epoch_pair_line(MEAS / f"{name}.dd-epoch.txt")
    out["sync_wall_seconds"] = epoch_pair_line(MEAS / f"{name}.sync-epoch.txt")
    out["sync_time_p_real_seconds"] = float((MEAS / f"{name}.sync-time.txt").read_text())
    out["workload_wall_seconds"] = epoch_pair_line(MEAS / f"{name}.workload-epoch.txt")
    out.update({k: int(v) for k, v in kv_file(MEAS / f"{name}.sysctl.txt").items()})
    return out


def epoch_pair_line(path):
    t0, t1 = path.read_text().split()
    return round((int(t1.replace(".", "")) - int(t0.replace(".", ""))) / 1e9, 6)


def blk_common(name, script, workload, vm):
    return {"kernel": vm["kernel"], "workload": workload, "uname_a": vm["uname_a"], "capture_script": script}


def pairing_check(name, dat):
    """Match blkparse D records against block_rq_issue in the trace.dat of the same run.
    blktrace stamps records with ktime_get() and the trace.dat was recorded with -C mono,
    so the raw times (genesis + blkparse's relative time) are directly comparable."""
    recs = []
    for p in sorted(ROOT.glob(f"{name}.blktrace.[0-9]*")):
        data = p.read_bytes()
        off = 0
        while off < len(data):
            magic, seq, t, sector, nbytes, action, pid, dev, cpu, err, pdu = BLK_HDR.unpack_from(data, off)
            if not (action >> 16) & BLK_TC_NOTIFY and (action & 0xFF) == 7:
                recs.append((t, sector, nbytes >> 9))
            off += BLK_HDR.size + pdu
    issues = []
    for line in run(TRACE_CMD, "report", "-t", str(ROOT / dat)).splitlines():
        m = re.search(r"\s(\d+\.\d+): block_rq_issue:\s+\d+,\d+ \S+ \d+ \(.*?\) (\d+) \+ (\d+)", line)
        if m:
            issues.append((int(m.group(1).replace(".", "")), int(m.group(2)), int(m.group(3))))
    lo, hi = (min(t for t, *_ in issues), max(t for t, *_ in issues)) if issues else (0, 0)
    in_window = [r for r in recs if lo <= r[0] <= hi]
    keyed = {}
    for t, s, n in issues:
        keyed.setdefault((s, n), []).append(t)
    deltas = []   # trace.dat time minus blktrace time of the nearest same (sector, length) issue
    for t, s, n in in_window:
        ts = keyed.get((s, n))
        if ts:
            deltas.append(min(ts, key=lambda x: abs(x - t)) - t)
    deltas.sort()
    return {"blktrace_D_with_sector": len(recs), "trace_dat_block_rq_issue_with_sector": len(issues),
            "blktrace_D_inside_trace_dat_window": len(in_window), "matched_by_sector_and_length": len(deltas),
            "matched_within_10us": sum(1 for d in deltas if abs(d) <= 10_000),
            "matched_within_100us": sum(1 for d in deltas if abs(d) <= 100_000),
            "median_time_difference_ns": deltas[len(deltas) // 2] if deltas else None,
            "max_abs_time_difference_ns": max(abs(d) for d in deltas) if deltas else None}


def blk_entries():
    entries = []
    for name, script, bases, dat, workload in BLK_SETS:
        start = len(entries)
        if not any(ROOT.glob(f"{bases[0]}.blktrace.[0-9]*")):
            print(f"{name}: not captured, skipped", file=sys.stderr)
            continue
        vm = vm_info(name)
        common = blk_common(name, script, workload, vm)
        tool = BLK_TOOL.format(dpkg=vm["dpkg_blktrace"], v=vm["blktrace_V"])
        bt_out = blktrace_out(name)
        text = blkparse_text(ROOT / f"{name}.blkparse.txt")
        meas = {"vm_run_wall_seconds": epoch_pair_line(MEAS / f"{name}.vm-run-epoch.txt")}
        if (MEAS / f"{name}.workload-epoch.txt").exists():
            meas["workload_wall_seconds"] = epoch_pair_line(MEAS / f"{name}.workload-epoch.txt")
        if name == "blk-ext4-fsync":
            meas.update(m_blk_ext4(name))
        if name == "blk-lost-events":
            _, w = fio_job(MEAS / f"{name}.fio.json", "write")
            meas.update(fio_write_ios=w["total_ios"], fio_write_iops=round(w["iops"], 1), fio_runtime_ms=w["runtime"],
                        attempts=int(kv_file(MEAS / f"{name}.attempts.txt")["attempts"]))
        cg = MEAS / f"{name}.cgroup.txt"
        if cg.exists():
            t = cg.read_text()
            meas["blk_cgroup_option"] = int(re.search(r"options/blk_cgroup=(\d)", t).group(1))
            meas["workload_cgroup_id"] = int(re.search(r"workload cgroup: \S+, cgroup id \(inode\) (\d+)", t).group(1))
        queues = queue_info(name)
        bt_cmd = (MEAS / f"{name}.blktrace-cmd.txt").read_text().strip()
        for base in bases:
            files = sorted(p.name for p in ROOT.glob(f"{base}.blktrace.[0-9]*"))
            dec = blk_decode([ROOT / f for f in files])
            devname = base.rsplit(".", 1)[1] if base != name else None
            out = bt_out[devname] if devname else next(iter(bt_out.values()))
            dev = "/dev/" + (devname or next(iter(bt_out)))
            dev_t = queues[dev]["dev"].replace(":", ",") if dev in queues else None
            e = {"file": base, "kind": "blktrace", "bytes": sum((ROOT / f).stat().st_size for f in files),
                 "file_version": dec["versions"][0] if len(dec["versions"]) == 1 else dec["versions"],
                 "compression": None, "kallsyms_masked": None,
                 "paired_with": dat, "basename": base, "files": files, "device": dev, "device_number": dev_t}
            e.update(common)
            e.update(events=[], act_mask="default (all categories)",
                     event_count=dec["records"], lost_events=out["dropped"],
                     lost_event_markers=text["skips"].get(base, 0),
                     trace_span_seconds=dec["span"], event_counts=dec["counts"],
                     actions=text["by_device"].get(dev_t, {}),
                     records_per_file=dec["per_file"], cgroup_records=dec["cgroup_records"],
                     cgroup_ids=dec["cgroup_ids"],
                     blkparse_events_entries=text["events_entries"].get(base),
                     blktrace_summary=out, queue=queues.get(dev, {}),
                     same_run=[b for b in bases if b != base], tool=tool, command=bt_cmd,
                     measurements=meas)
            entries.append(e)
        # paired_with links only blktrace <-> trace.dat (tests treat a non-trace.dat entry
        # with paired_with as text printed from that trace.dat); derived files name their
        # source sets in derived_from.
        derived = {"derived_from": bases, "paired_with": None}
        ins = " ".join(f"-i {b}" for b in bases)
        entries.append(blkparse_text_entry(name, common, vm, text, bases, f"blkparse {ins} -D DIR > {name}.blkparse.txt",
                                           sum(bt_out[d]["dropped"] for d in bt_out)))
        if (ROOT / f"{name}.bin").exists():
            dec = blk_decode([ROOT / f"{name}.bin"])
            e = {"file": f"{name}.bin", "kind": "blktrace-merged", "bytes": (ROOT / f"{name}.bin").stat().st_size,
                 "file_version": dec["versions"][0], "compression": None, "kallsyms_masked": None, **derived}
            e.update(common)
            e.update(events=[], event_count=dec["records"], lost_events=sum(bt_out[d]["dropped"] for d in bt_out),
                     lost_event_markers=sum(text["skips"].values()), trace_span_seconds=dec["span"],
                     event_counts=dec["counts"], actions=text["actions"], cgroup_records=dec["cgroup_records"],
                     cgroup_ids=dec["cgroup_ids"], records_per_device=dec["devices"],
                     tool=f"blkparse {vm['blkparse_V'].split()[-1]} -d (dump of the merged, time-sorted stream)",
                     command=f"blkparse {ins} -D DIR -d {name}.bin -O", measurements={})
            entries.append(e)
        btt = btt_all_devices(ROOT / f"{name}.btt.txt")
        e = {"file": f"{name}.btt.txt", "kind": "btt-text", "bytes": (ROOT / f"{name}.btt.txt").stat().st_size,
             "file_version": None, "compression": None, "kallsyms_masked": None, **derived}
        e.update(common)
        e.update(events=[], event_count=None, lost_events=None, lost_event_markers=None, trace_span_seconds=None,
                 event_counts={}, actions={}, btt_all_devices=btt,
                 tool=f"btt {vm['btt_V'].split()[-1]} (Debian 12 blktrace package)",
                 command=f"btt -i {name}.bin > {name}.btt.txt", measurements={})
        entries.append(e)
        if dat:
            path = ROOT / dat
            ver, comp, ks, clock = dump_summary(path)
            counts, lost, markers, overrun = report_counts(path, comp)
            e = {"file": dat, "kind": "trace.dat", "bytes": path.stat().st_size, "file_version": ver,
                 "compression": comp, "kallsyms_masked": ks == 0, "kallsyms_bytes": ks, "paired_with": bases[0]}
            e.update(common)
            e.update(events=enabled_events(name), event_count=sum(counts.counts.values()),
                     lost_events=lost, lost_event_markers=markers, trace_span_seconds=counts.span(),
                     event_counts=dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])),
                     trace_clock=clock,
                     tool="trace-cmd 3.1.6 (Debian 12) record, inside the VM, -C mono",
                     cpu_stats_overrun=overrun, pairing=pairing_check(name, dat), measurements=meas)
            entries.append(e)
        for e in entries[start:]:
            print(f"{e['file']}: {e['kind']}, {e['bytes']} bytes, {e['event_count']} records/events", file=sys.stderr)
    return entries


W_BLK_STREAM = ("VM (Debian 6.1, emulated): blktrace -o - (records of both CPUs on one stream) during fio libaio 4k "
                "O_DIRECT randrw, iodepth 8, 1500 IOPS cap, 2 s, on the raw 1 GiB virtio disk (none scheduler)")


def stream_entries():
    """Capture 14: the byte stream `blktrace -o -` writes, and `blkparse -i -` of it."""
    name = "blk-stdin-stream"
    path = ROOT / f"{name}.stream"
    if not path.exists():
        print(f"{name}: not captured, skipped", file=sys.stderr)
        return []
    vm = vm_info(name)
    common = blk_common(name, "capture/14-blk-stdin-stream.sh", W_BLK_STREAM, vm)
    dec = blk_decode([path])
    text = blkparse_text(ROOT / f"{name}.blkparse.txt")
    _, w = fio_job(MEAS / f"{name}.fio.json", "write")
    _, r = fio_job(MEAS / f"{name}.fio.json", "read")
    meas = {"vm_run_wall_seconds": epoch_pair_line(MEAS / f"{name}.vm-run-epoch.txt"),
            "fio_read_ios": r["total_ios"], "fio_write_ios": w["total_ios"]}
    queues = queue_info(name)
    e = {"file": path.name, "kind": "blktrace-stream", "bytes": path.stat().st_size,
         "file_version": dec["versions"][0], "compression": None, "kallsyms_masked": None, "paired_with": None}
    e.update(common)
    e.update(events=[], event_count=dec["records"], lost_events=None,
             lost_event_markers=sum(text["skips"].values()), trace_span_seconds=dec["span"],
             event_counts=dec["counts"], actions=text["actions"], cgroup_records=dec["cgroup_records"],
             cgroup_ids=dec["cgroup_ids"], records_per_device=dec["devices"],
             cpu_changes=sum(1 for a, b in zip(dec["cpus"], dec["cpus"][1:]) if a != b),
             queue=next(iter(queues.values()), {}),
             tool=BLK_TOOL.format(dpkg=vm["dpkg_blktrace"], v=vm["blktrace_V"]),
             command=(MEAS / f"{name}.blktrace-cmd.txt").read_text().strip(), measurements=meas)
    return [e, blkparse_text_entry(name, common, vm, text, [path.name], f"blkparse -i - < {path.name} > {name}.blkparse.txt", None)]


def blkparse_text_entry(name, common, vm, text, derived_from, command, lost):
    """The manifest entry of NAME.blkparse.txt, printed by blkparse from `derived_from`."""
    e = {"file": f"{name}.blkparse.txt", "kind": "blkparse-text", "bytes": (ROOT / f"{name}.blkparse.txt").stat().st_size,
         "file_version": None, "compression": None, "kallsyms_masked": None, "derived_from": derived_from, "paired_with": None}
    e.update(common)
    e.update(events=[], event_count=text["lines"], lost_events=lost, lost_event_markers=sum(text["skips"].values()),
             trace_span_seconds=text["span"], event_counts=text["actions"], actions=text["actions"],
             actions_by_device=text["by_device"], blkparse_events_entries=text["events_entries"],
             blkparse_skips=text["skips"], tool=f"blkparse {vm['blkparse_V'].split()[-1]} (Debian 12), default format",
             command=command, measurements={})
    return e


def file_entry(row) -> dict:
    """The manifest entry of one FILES row."""
    fname, kind, workload, paired, evname, meas = row
    path = ROOT / fname
    e = {"file": fname, "kind": kind, "bytes": path.stat().st_size}
    clock = None
    if kind == "trace.dat":
        ver, comp, ks, clock = dump_summary(path)
        # -R: one line per event (without it, function_graph prints a leaf call's entry
        # and exit as one line, "ext4_writepages();").
        counts, lost, markers, overrun = report_counts(path, comp, ("-R",))
        e.update(file_version=ver, compression=comp, kallsyms_masked=(ks == 0), kallsyms_bytes=ks)
    elif kind in ("report-text", "report-raw-text"):
        counts, lost, markers = text_counts(path)
        overrun = None
        e.update(file_version=None, compression=None, kallsyms_masked=False)
    else:
        counts, lost, markers = text_counts(path)
        overrun = None
        e.update(file_version=None, compression=None, kallsyms_masked=False)
    uname_a = (MEAS / VM_UNAME[fname]).read_text().strip() if fname in VM_UNAME else UNAME_A
    e.update(paired_with=paired, kernel=uname_a.split()[2], workload=workload,
             events=enabled_events(evname),
             event_count=sum(counts.counts.values()),
             lost_events=lost, lost_event_markers=markers,
             trace_span_seconds=counts.span(),
             event_counts=dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])))
    if clock is not None:
        e["trace_clock"] = clock
    if getattr(counts, "unparsed", 0):
        e["unparsed_lines"] = counts.unparsed
    e["uname_a"] = uname_a
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
    print(f"{fname}: {e['bytes']} bytes, {e['event_count']} events, lost {lost} ({markers} markers)",
          file=sys.stderr)
    return e


def main():
    if sys.argv[1:2] == ["--only"]:
        # add or replace these files' entries, every other entry kept as it is
        merge_entries([file_entry(row) for row in FILES if row[0] in sys.argv[2:]])
        return
    entries = [file_entry(row) for row in FILES]
    entries.extend(blk_entries())
    entries.extend(stream_entries())
    from realscale_manifest import entries as realscale_entries  # captures 18-24
    entries.extend(realscale_entries())
    from lab_manifest import entries as lab_entries  # lab kernels: stock vs one fix undone
    entries.extend(lab_entries())
    (ROOT / "manifest.json").write_text(json.dumps(entries, indent=1) + "\n")


if __name__ == "__main__":
    main()
