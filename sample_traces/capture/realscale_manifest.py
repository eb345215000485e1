#!/usr/bin/env python3
"""Manifest entries of the real-scale captures 18-24 and 37-44 (two runs of each scenario, three of dbench-stable1-ext4).

    capture/realscale_manifest.py       # adds/replaces these entries in ../manifest.json

Only this module's own entries are replaced (matched by file name); every other entry
keeps its place.  make_manifest.py appends the same entries when it rebuilds the whole
manifest.  Every number comes from `trace-cmd report` / `dump` on the file or from the
tools' own output saved by the capture scripts in measurements/.

Each entry carries "scenario" (what was run), "run" (1, 2, ...) and "role": "fit" (for
fitting and debugging) or "holdout" (a test no model is ever adjusted against).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_manifest as mm  # noqa: E402  (shared helpers: trace-cmd counts, fio JSON, epochs)

ROOT, MEAS = mm.ROOT, mm.MEAS

DEVICE = "loop device (losetup --direct-io=on, file on the host's virtio disk), writes capped by blkio.throttle.write_bps_device"
W_SNAP_SEQ = ("btrfs on a 4 GiB loop, writes capped at 40 MiB/s; fio sequential buffered writer (libaio iodepth 32, bs 4k, "
              "20 MB/s) in a subvolume; after 6 s a read-only snapshot by capture/snapshot-ioctl "
              "(BTRFS_IOC_SNAP_CREATE_V2 timed with CLOCK_MONOTONIC around the ioctl); fio stopped 1 s later")
W_SNAP_RAND4 = ("btrfs on a 4 GiB loop, writes capped at 40 MiB/s; 4 fio random buffered writers (randwrite, libaio "
                "iodepth 32, bs 4k, numjobs 4 on one 1 GiB file, 1 MB/s each) in a subvolume; after 6 s a read-only "
                "snapshot by capture/snapshot-ioctl; fio stopped 1 s later")
W_SYNC = ("xfs on an 8 GiB loop, writes capped at 24 MiB/s; fs_mark -t 2 -D 100 -n 20000 -L 3 -s 4096 -S 0 -k "
          "(120,000 4 KiB files, no fsync); sync(1) after 5 s while fs_mark goes on")
W_FSYNC = ("btrfs on a 4 GiB loop, writes capped at 40 MiB/s; 4 fio jobs (psync randwrite bs 4k, fsync every 8 writes, "
           "own 256 MiB file each, laid out beforehand from inside the cgroup, --invalidate=0) for 25 s in a memory "
           "cgroup (v1 memory.limit_in_bytes) of 128 MiB: memcg limit reclaim")
W_DBENCH = ("ext4 on a 4 GiB loop with queue/stable_writes={sw}, writes capped at 40 MiB/s; dbench 4 clients 10 s "
            "(Debian client.txt; Flush = fsync)")
W_UNTAR = ("btrfs on a 2 GiB loop, writes capped at 40 MiB/s, filled by fallocate until ~150 MiB of data space is "
           "free; tar -xf of a generated source-tree-like tarball (3,500 text files, capture/make-src-tarball.py) "
           "then sync: metadata reservations overcommit (btrfs_flush_space)")
W_FSYNC_TEXT = (W_FSYNC + "; recorded by hand in tracefs (default 1408 KB per-CPU buffer, overwrite mode, local clock): "
                "cat trace, then trace-cmd extract of the same ring buffer")


def text(name, suffix):
    return (MEAS / f"{name}.{suffix}").read_text()


def loadavg(name):
    """load average (1, 5, 15 min) just before recording, from measurements/NAME.host.txt"""
    m = re.search(r"^loadavg (\S+) (\S+) (\S+)", text(name, "host.txt"), re.M)
    return [float(m.group(i)) for i in (1, 2, 3)]


def device(name):
    d = {}
    for line in text(name, "device.txt").splitlines():
        k, _, v = line.partition(" ")
        d[k] = v
    bps = d.get("blkio.throttle.write_bps_device", "none").split()
    return {"device_write_cap_bytes_per_s": int(bps[-1]) if len(bps) == 2 else None,
            "device_size_bytes": int(d["size_bytes"]),
            "device_stable_writes": int(d["queue/stable_writes"]),
            "device_scheduler": d["queue/scheduler"]}


def loop_written(name):
    """bytes and write requests the loop device completed during the workload (stat [4], [6])"""
    rows = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in text(name, "loop-stat.txt").splitlines()}
    b, a = rows["before"], rows["after"]
    return {"loop_write_ios": a[4] - b[4], "loop_bytes_written": (a[6] - b[6]) * 512}


def meminfo_kb(s, key):
    m = re.search(rf"{key}:\s+(\d+) kB", s)
    return int(m.group(1)) if m else None


def m_snapshot(name):
    out = mm.m_snapshot(name)
    at = text(name, "meminfo-at-snapshot.txt")
    out["host_dirty_kb_at_snapshot"] = meminfo_kb(at, "Dirty")   # whole host, other jobs included
    out["host_writeback_kb_at_snapshot"] = meminfo_kb(at, "Writeback")
    out.update(loop_written(name))
    return out


def m_sync(name):
    rows = [l.split() for l in text(name, "fs_mark.txt").splitlines()
            if re.match(r"^\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s*$", l)]
    states = {}
    for line in text(name, "state.txt").splitlines():
        p = line.split()
        states[p[0]] = {"epoch": p[1], "iused": int(p[3]), "dirty_kb": int(p[5]), "writeback_kb": int(p[8]),
                        "loop_stat": [int(x) for x in p[p.index("loop_stat") + 1:]]}
    b, a = states["before_sync"], states["after_sync"]
    return {
        "sync_wall_seconds": mm.epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
        "sync_bash_time_real_seconds": float(text(name, "sync-time.txt")),
        "fs_mark_files_per_s_per_iteration": [float(r[3]) for r in rows],
        "fs_mark_files_total": int(rows[-1][1]) if rows else None,
        "inodes_used_at_sync_start": b["iused"],
        "inodes_used_at_sync_end": a["iused"],
        "inodes_used_at_end": states["end"]["iused"],
        "host_dirty_kb_at_sync_start": b["dirty_kb"],   # whole host, other jobs included
        "loop_write_ios_during_sync": a["loop_stat"][4] - b["loop_stat"][4],
        "loop_bytes_written_during_sync": (a["loop_stat"][6] - b["loop_stat"][6]) * 512,
    }


def kv(path):
    out = {}
    for line in path.read_text().splitlines():
        p = line.split()
        if p[0] == "memory.stat":
            out[f"stat.{p[1]}"] = int(p[2])
        else:
            out[p[0]] = int(p[1])
    return out


def m_fsync(name):
    j, w = mm.fio_job(MEAS / f"{name}.fio.json", "write")
    s = j["sync"]["lat_ns"]
    out = {"fio_jobs_grouped": True, "fio_write_count": w["total_ios"], "fio_write_iops": round(w["iops"], 1),
           "fio_write_clat_p99_us": mm.us(mm.pct(w["clat_ns"], 99)), "fio_write_clat_max_us": mm.us(w["clat_ns"]["max"]),
           "fio_fsync_count": j["sync"]["total_ios"], "fio_fsync_lat_mean_us": mm.us(s["mean"])}
    for p in (50, 90, 99, 99.9):
        out[f"fio_fsync_lat_p{str(p).replace('.', '_')}_us"] = mm.us(mm.pct(s, p))
    out["fio_fsync_lat_max_us"] = mm.us(s["max"])
    c0, c1 = kv(MEAS / f"{name}.memcg-before.txt"), kv(MEAS / f"{name}.memcg-after.txt")
    v0, v1 = mm.vmstat(MEAS / f"{name}.vmstat-before.txt"), mm.vmstat(MEAS / f"{name}.vmstat-after.txt")
    out.update({
        "memcg_limit_bytes": c1["memory.limit_in_bytes"],
        "memcg_failcnt_delta": c1["memory.failcnt"] - c0["memory.failcnt"],
        "memcg_max_usage_bytes": c1["memory.max_usage_in_bytes"],
        "memcg_cache_bytes_before": c0["stat.cache"], "memcg_cache_bytes_after": c1["stat.cache"],
        "memcg_pgpgin_delta": c1["stat.pgpgin"] - c0["stat.pgpgin"],
        "memcg_pgpgout_delta": c1["stat.pgpgout"] - c0["stat.pgpgout"],
        # /proc/vmstat deltas over the workload (whole host)
        "vmstat_pgscan_direct": v1["pgscan_direct"] - v0["pgscan_direct"],
        "vmstat_pgsteal_direct": v1["pgsteal_direct"] - v0["pgsteal_direct"],
        "vmstat_pgscan_kswapd": v1["pgscan_kswapd"] - v0["pgscan_kswapd"],
    })
    out.update(loop_written(name))
    return out


def m_dbench(name):
    out = mm.m_dbench(name)
    txt = text(name, "dbench.txt")
    for op in ("WriteX", "ReadX", "NTCreateX"):
        m = re.search(rf"^\s*{op}\s+(\d+)\s+([\d.]+)\s+([\d.]+)", txt, re.M)
        k = op.lower()
        out.update({f"dbench_{k}_count": int(m.group(1)), f"dbench_{k}_avg_latency_ms": float(m.group(2)),
                    f"dbench_{k}_max_latency_ms": float(m.group(3))})
    out["stable_writes"] = int(text(name, "stable_writes.txt"))
    out.update(loop_written(name))
    return out


def free_estimated(path):
    m = re.search(r"Free \(estimated\):\s+(\d+)", path.read_text())
    return int(m.group(1))


def m_untar(name):
    out = mm.m_untar(name)
    out["sync_bash_time_real_seconds"] = float(text(name, "sync-time.txt"))
    out["files_on_fs_after"] = int(text(name, "files-on-fs.txt"))
    out["btrfs_free_estimated_bytes_before"] = free_estimated(MEAS / f"{name}.fs-usage-before.txt")
    out["btrfs_free_estimated_bytes_after"] = free_estimated(MEAS / f"{name}.fs-usage-after.txt")
    return out


def m_fsync_text(name):
    out = m_fsync(name)
    out.update(mm.m_tracefs(ROOT / f"{name}.trace.txt"))
    return out


# (file stem, scenario, run, script, workload, measurements)
CAPTURES = []
for run in (1, 2):
    CAPTURES += [
        (f"snapshot-seq-btrfs-run{run}-v7-zstd", "snapshot-seq-btrfs", run, "capture/18-snapshot-seq-btrfs.sh", W_SNAP_SEQ, m_snapshot),
        (f"snapshot-rand4-btrfs-run{run}-v7-zstd", "snapshot-rand4-btrfs", run, "capture/19-snapshot-rand4-btrfs.sh", W_SNAP_RAND4, m_snapshot),
        (f"sync-fsmark-xfs-run{run}-v7-zstd", "sync-fsmark-xfs", run, "capture/20-sync-fsmark-xfs.sh", W_SYNC, m_sync),
        (f"fsync-memcg-btrfs-run{run}-v7-zstd", "fsync-memcg-btrfs", run, "capture/21-fsync-memcg-btrfs.sh", W_FSYNC, m_fsync),
        (f"dbench-stable1-ext4-run{run}-v7-zstd", "dbench-stable1-ext4", run, "capture/22-dbench-stable-ext4.sh (STABLE=1)",
         W_DBENCH.format(sw=1), m_dbench),
        (f"dbench-stable0-ext4-run{run}-v7-zstd", "dbench-stable0-ext4", run, "capture/22-dbench-stable-ext4.sh (STABLE=0)",
         W_DBENCH.format(sw=0), m_dbench),
        (f"untar-full-btrfs-run{run}-v7-zstd", "untar-full-btrfs", run, "capture/23-untar-full-btrfs.sh", W_UNTAR, m_untar),
    ]
# dbench-stable1-ext4 run 3, recorded the same way: run 2 was the holdout until the
# stable-pages model was debugged on it (its two stalled writes that the model missed had
# slept in balance_dirty_pages first), so it became a fit run and run 3, recorded then
# and not looked at before the model was settled, took its place.
CAPTURES.append(("dbench-stable1-ext4-run3-v7-zstd", "dbench-stable1-ext4", 3, "capture/22-dbench-stable-ext4.sh (STABLE=1)",
                 W_DBENCH.format(sw=1), m_dbench))
# Capture 37, recorded the same way later (fio rewriting a file whose pages it puts
# under writeback itself, with a call the capture does not record).
W_FIO_REWRITE = ("ext4 on 1 GiB loop (direct-io, stable_writes=1); fio psync 4k sequential rewrite of a 128 KiB file, "
                 "sync_file_range(WRITE) every 64 writes, invalidate=1 (posix_fadvise DONTNEED on each reopen), 10000 IOPS cap, 3 s; "
                 "writeback and block subsystems, sched_switch, sched_wakeup, fio's pwrite64 and sync_file_range")
for run in (1, 2):
    CAPTURES.append((f"fio-rewrite-stable-ext4-run{run}-v7-zstd", "fio-rewrite-stable-ext4", run, "capture/37-fio-rewrite-stable-ext4.sh",
                     W_FIO_REWRITE, mm.m_stable))
# Capture 38, recorded later: capture 20's scenario on ext4 without the block layer (the
# whole writeback, ext4 and jbd2 subsystems), so the device shows only through inodes
# entering and leaving writeback.
W_SYNC_EXT4 = ("ext4 on an 8 GiB loop, writes capped at 8 MiB/s; fs_mark -t 2 -D 100 -n 5000 -L 2 -s 4096 -S 0 -k "
               "(20,000 4 KiB files, no fsync); sync(1) after 3 s; writeback subsystem (this device), ext4 and jbd2 "
               "subsystems, the sync calls; no block events")
for run in (1, 2):
    CAPTURES.append((f"sync-fsmark-ext4-noblock-run{run}-v7-zstd", "sync-fsmark-ext4-noblock", run,
                     "capture/38-sync-fsmark-ext4-noblock.sh", W_SYNC_EXT4, m_sync))
# Capture 39, recorded later: fsync-heavy fio on btrfs without the block layer (the whole
# writeback and btrfs subsystems), so the log commits show only as btrfs's btree inode
# entering and leaving writeback.
W_FSYNC_NOBLOCK = ("btrfs on a 4 GiB loop, writes capped at 40 MiB/s; fio 2 jobs, psync randwrite bs 4k into their own "
                   "64 MiB file, fsync every 4 writes, 6 s; writeback and btrfs subsystems (unfiltered), fio's write and "
                   "fsync calls; no block events")


def m_fio_fsync_jobs(name):
    """fio's fsync latencies per job (the jobs are not grouped), from outside the trace."""
    txt = (MEAS / f"{name}.fio.json").read_text()
    jobs = json.loads(txt[txt.index("{"):])["jobs"]
    lat = [j["sync"]["lat_ns"] for j in jobs]
    # fio counts an fdatasync job's calls in lat_ns's N only (its total_ios stays 0)
    out = {"fio_jobs_grouped": False, "fio_fsync_count": [s.get("N", j["sync"]["total_ios"]) for j, s in zip(jobs, lat)],
           "fio_fsync_lat_mean_us": [mm.us(s["mean"]) for s in lat]}
    for p in (50, 99):
        out[f"fio_fsync_lat_p{p}_us"] = [mm.us(mm.pct(s, p)) for s in lat]
    out["fio_fsync_lat_max_us"] = [mm.us(s["max"]) for s in lat]
    return out


for run in (1, 2):
    CAPTURES.append((f"fsync-btrfs-noblock-run{run}-v7-zstd", "fsync-btrfs-noblock", run, "capture/39-fsync-btrfs-noblock.sh",
                     W_FSYNC_NOBLOCK, m_fio_fsync_jobs))
# Capture 40, recorded later: a sync while dbench creates, writes, fsyncs and deletes files
# on ext4, so most of what it dirties is deleted before writeback reaches it.
W_SYNC_DBENCH = ("ext4 on a 4 GiB loop, writes capped at 8 MiB/s; dbench 4 clients 8 s (Debian client.txt); sync(1) after "
                 "4 s while dbench goes on; writeback and block subsystems (this device), the ext4 subsystem (unfiltered), "
                 "the sync calls of dbench and sync")


def m_sync_state(name):
    """the sync's duration, the host's Dirty/Writeback and the loop device's stat around it
    (state.txt lines: label, epoch, "Dirty: N kB Writeback: N kB loop_stat ...")."""
    states = {}
    for line in text(name, "state.txt").splitlines():
        p = line.split()
        states[p[0]] = {"dirty_kb": int(p[3]), "writeback_kb": int(p[6]),
                        "loop_stat": [int(x) for x in p[p.index("loop_stat") + 1:]]}
    b, a = states["before_sync"], states["after_sync"]
    return {"sync_wall_seconds": mm.epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
            "sync_bash_time_real_seconds": float(text(name, "sync-time.txt")),
            "host_dirty_kb_at_sync_start": b["dirty_kb"],   # whole host, other jobs included
            "host_writeback_kb_at_sync_start": b["writeback_kb"],
            "loop_write_ios_during_sync": a["loop_stat"][4] - b["loop_stat"][4],
            "loop_bytes_written_during_sync": (a["loop_stat"][6] - b["loop_stat"][6]) * 512}


def m_sync_dbench(name):
    """m_sync_state and dbench's report."""
    return {**m_sync_state(name), **mm.m_dbench(name)}


# Run 2 was replayed while the folio sizes and the metadata per inode were being changed,
# so it became a fit run and run 3, recorded then and replayed only once the model was
# settled, took its place.
for run in (1, 2, 3):
    CAPTURES.append((f"sync-dbench-ext4-run{run}-v7-zstd", "sync-dbench-ext4", run, "capture/40-sync-dbench-ext4.sh",
                     W_SYNC_DBENCH, m_sync_dbench))
# Capture 41, recorded later: capture 38's scenario with 8 KiB files, recorded with nothing
# filtered (the whole writeback and block subsystems, every task's sync calls), so the
# host's own filesystem under the loop device's image shows too.
W_SYNC_UNFILTERED = ("ext4 on an 8 GiB loop, writes capped at 8 MiB/s; fs_mark -t 2 -D 100 -n 5000 -L 2 -s 8192 -S 0 -k "
                     "(20,000 8 KiB files, no fsync); sync(1) after 3 s; writeback and block subsystems and the "
                     "sync/syncfs/fsync/fdatasync calls, all unfiltered (the host's root ext4 on 254:0, which holds the "
                     "loop device's image and the trace file, shows too)")
# Run 2 was the held-out run until its device rate showed the replay taking it from 1.2 s
# of backlog rather than the flusher's 22 s of work; it became a fit run, and run 3,
# recorded then, was replayed only once the model was settled.
for run in (1, 2, 3):
    CAPTURES.append((f"sync-fsmark-ext4-unfiltered-run{run}-v7-zstd", "sync-fsmark-ext4-unfiltered", run,
                     "capture/41-sync-fsmark-ext4-unfiltered.sh", W_SYNC_UNFILTERED, m_sync))
# Capture 42, recorded later: a sync on a loop device's ext4 while another filesystem on
# the disk under it (the host's root ext4) writes 600 MB, recorded with nothing filtered.
W_SYNC_SHARED = ("ext4 on a 2 GiB loop, not throttled; fio 2 jobs 5 s (psync bs 4k, 6 MB/s each: randwrite with an fsync "
                 "every 16 writes, sequential write with an fdatasync every 64); 1.5 s in, dd of 600 MB (bs 1M, buffered) "
                 "to a file on the host's root ext4 (254:0, the disk under the loop device's image); sync(1) 2 s in; "
                 "writeback and block subsystems and the sync/syncfs/fsync/fdatasync calls, all unfiltered")


def m_sync_shared(name):
    """m_sync_state and fio's fsync/fdatasync latencies per job."""
    return {**m_sync_state(name), **m_fio_fsync_jobs(name)}


# Run 2 showed, like run 1, one inode too many in the replayed sync (the host disk's own
# inode, on the superblock every block device's inode shares) and was replayed while that
# was fixed, so it became a fit run; run 3, recorded then, was replayed once.
for run in (1, 2, 3):
    CAPTURES.append((f"sync-fio-shared-disk-ext4-run{run}-v7-zstd", "sync-fio-shared-disk-ext4", run,
                     "capture/42-sync-fio-shared-disk-ext4.sh", W_SYNC_SHARED, m_sync_shared))
# Capture 43, recorded later: capture 38's scenario on btrfs, recorded with the whole
# writeback, block and btrfs subsystems (8,000 files: the btrfs subsystem's tree-lock and
# extent-state events make 20,000 files a 22 MB capture).
W_SYNC_BTRFS = ("btrfs on an 8 GiB loop, writes capped at 4 MiB/s; fs_mark -t 2 -D 100 -n 2000 -L 2 -s 4096 -S 0 -k "
                "(8,000 4 KiB files, no fsync); sync(1) after 2 s; writeback and block subsystems (this device and "
                "its btrfs bdi), the whole btrfs subsystem, the sync calls")
for run in (1, 2):
    CAPTURES.append((f"sync-fsmark-btrfs-run{run}-v7-zstd", "sync-fsmark-btrfs", run,
                     "capture/43-sync-fsmark-btrfs.sh", W_SYNC_BTRFS, m_sync))
# Capture 44, recorded later: a sync writing inodes whose pages an earlier syncfs wrote and
# which turned dirty again in their metadata only (chmod).
W_SYNC_CHMOD = ("ext4 on a 2 GiB loop, writes capped at 16 MiB/s; 3,000 files of 8 KiB written in 30 directories, "
                "sync -f (syncfs) of the filesystem, chmod 600 of every file, dd of 24 MB into a new file (buffered, bs 1M), "
                "sync(1); writeback and block subsystems and the sync/syncfs/fsync/fdatasync calls, all unfiltered")
for run in (1, 2):
    CAPTURES.append((f"sync-chmod-ext4-run{run}-v7-zstd", "sync-chmod-ext4", run,
                     "capture/44-sync-chmod-ext4.sh", W_SYNC_CHMOD, m_sync_state))
HOLDOUT_RUN = {"dbench-stable1-ext4": 3, "sync-dbench-ext4": 3, "sync-fsmark-ext4-unfiltered": 3,
               "sync-fio-shared-disk-ext4": 3}  # else run 2
TEXT_CAPTURE = ("fsync-memcg-btrfs-run3-tracefs", "fsync-memcg-btrfs", 3, "capture/24-fsync-memcg-btrfs-tracefs.sh",
                W_FSYNC_TEXT, m_fsync_text)
# the dbench pair differs in stable_writes only: a before/after comparison
COMPARE = {"dbench-stable1-ext4": ("dbench-ext4-stable-writes", {"stable_writes": 1}),
           "dbench-stable0-ext4": ("dbench-ext4-stable-writes", {"stable_writes": 0})}


def common(stem, scenario, run, script, workload):
    uname_a = text(stem, "uname.txt").strip()
    e = {"scenario": scenario, "run": run, "role": "holdout" if run == HOLDOUT_RUN.get(scenario, 2) else "fit"}
    if scenario in COMPARE and run <= 2:  # run 3 came later, on a host at another load: not in the comparison
        e["compare_group"], e["setting"] = COMPARE[scenario]
    e.update(kernel=uname_a.split()[2], workload=workload, uname_a=uname_a, capture_script=script,
             events=mm.enabled_events(stem), host_loadavg_before=loadavg(stem), device=DEVICE)
    e.update(device(stem))
    return e


def dat_entry(stem, scenario, run, script, workload, meas, tool="trace-cmd 3.1.6 (Debian 12) record", paired=None):
    path = ROOT / f"{stem}.dat"
    ver, comp, ks, clock = mm.dump_summary(path)
    counts, lost, markers, overrun = mm.report_counts(path, comp)
    e = {"file": path.name, "kind": "trace.dat", "bytes": path.stat().st_size, "file_version": ver,
         "compression": comp, "kallsyms_masked": ks == 0, "kallsyms_bytes": ks, "paired_with": paired}
    e.update(common(stem, scenario, run, script, workload))
    e.update(event_count=sum(counts.counts.values()), lost_events=lost, lost_event_markers=markers,
             trace_span_seconds=counts.span(),
             event_counts=dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])),
             trace_clock=clock, tool=tool, cpu_stats_overrun=overrun, measurements=meas(stem))
    return e


def text_entry(stem, scenario, run, script, workload, meas):
    path = ROOT / f"{stem}.trace.txt"
    counts, lost, markers = mm.text_counts(path)
    e = {"file": path.name, "kind": "tracefs-text", "bytes": path.stat().st_size, "file_version": None,
         "compression": None, "kallsyms_masked": False, "paired_with": f"{stem}.dat"}
    e.update(common(stem, scenario, run, script, workload))
    e.update(event_count=sum(counts.counts.values()), lost_events=lost, lost_event_markers=markers,
             trace_span_seconds=counts.span(),
             event_counts=dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])),
             tool="cat /sys/kernel/tracing/trace (events enabled by echo into tracefs)", measurements=meas(stem))
    # overwrite mode: `trace` prints no LOST marker for what was overwritten before it was read;
    # its header says how many: entries-written minus entries-in-buffer
    e["overwritten_events"] = e["measurements"]["tracefs_entries_written"] - e["measurements"]["tracefs_entries_in_buffer"]
    return e


def entries():
    out = []
    for stem, scenario, run, script, workload, meas in CAPTURES:
        if not (ROOT / f"{stem}.dat").exists():
            print(f"{stem}: not captured, skipped", file=sys.stderr)
            continue
        out.append(dat_entry(stem, scenario, run, script, workload, meas))
    stem, scenario, run, script, workload, meas = TEXT_CAPTURE
    if (ROOT / f"{stem}.trace.txt").exists():
        out.append(text_entry(stem, scenario, run, script, workload, meas))
        out.append(dat_entry(stem, scenario, run, script, workload + " (this file: the extract)", meas,
                             tool="tracefs (echo > events/*/enable) + trace-cmd 3.1.6 extract", paired=f"{stem}.trace.txt"))
    for e in out:
        print(f"{e['file']}: {e['bytes']} bytes, {e['event_count']} events, lost {e['lost_events']} "
              f"({e['lost_event_markers']} markers), {e['scenario']} {e['role']}", file=sys.stderr)
    return out


def main():
    mm.merge_entries(entries())


if __name__ == "__main__":
    main()
