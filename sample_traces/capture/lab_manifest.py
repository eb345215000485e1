#!/usr/bin/env python3
"""Manifest entries of the lab-kernel captures (lab/kernels/capture.sh): the same workload
on the stock 6.1.192 build and on the build with one writeback fix undone, two runs each.

    capture/lab_manifest.py       # adds/replaces these entries in ../manifest.json

Each entry carries "kernel_variant" ("stock" or "revert:<rule id>"), "pair" (shared by
every capture of one workload, stock and reverted), "rule" and "run", and the lab
kernel's build record (release, patch and image sha256) from measurements/NAME.kernel-build.txt.
Only this module's own entries (lab-*.dat) are replaced; make_manifest.py appends the same
entries when it rebuilds the whole manifest.  Every number comes from `trace-cmd report` /
`dump` on the file or from the tools' own output saved in measurements/.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_manifest as mm  # noqa: E402

ROOT, MEAS = mm.ROOT, mm.MEAS
NAME_RE = re.compile(r"^lab-(?P<rule>[a-z-]+)-(?P<side>stock|revert)-run(?P<run>\d+)-v7-zstd$")
DEVICE = ("null_blk in the VM (memory-backed, 1 GiB, 4 KiB blocks, every request completed service_ms after "
          "issue by a timer, up to 64 in flight; lab/kernels/workloads/lib.vm.sh); emulated CPU (qemu TCG), 2 vCPUs, 2 GiB RAM")

WORKLOADS = {
    "sync-flusher-stall": ("lab-sync-xfs-smallfiles",
                           "xfs on the null_blk disk; smallfiles.py writes 4,000 files of 4 KiB (no fsync), then a second "
                           "writer creates 4 KiB files as fast as it can while sync(1) runs 0.5 s later (date +%s.%N around it)"),
    "stable-page-wait": ("lab-stable-ext4-rewrite",
                         "ext4 on the null_blk disk (stable_writes 0); fio rewrites a 256 KiB file with buffered 4 KiB "
                         "pwrites, sync_file_range(WRITE) every 64 writes, 2000 IOPS cap, 4 s"),
    "btrfs-snapshot-livelock": ("lab-snapshot-btrfs-seq",
                                "btrfs on the null_blk disk; fio sequential buffered writer (libaio iodepth 32, bs 4k, "
                                "8 MB/s) in a subvolume; after 4 s a read-only snapshot by capture/snapshot-ioctl; "
                                "fio stopped 1 s later"),
    "btrfs-full-fsync-fallback": ("lab-fsync-memcg-btrfs",
                                  "btrfs on the null_blk disk; 4 fio jobs (psync randwrite bs 4k, own 48 MiB file each, "
                                  "fsync every 4 writes, 100 IOPS each) for 6 s in a cgroup v2 with memory.max 16 MiB"),
    "btrfs-delalloc-overflush": ("lab-untar-full-btrfs",
                                 "btrfs on the null_blk disk filled by a fallocated file until ~90 MiB of data space "
                                 "is free; tar -xf of a source-tree-like tarball (1,500 text files, 3 per mille of them "
                                 "256 KiB - 8 MiB; 36 MB: capture/make-src-tarball.py OUT 1500 1 3) then sync: metadata "
                                 "reservations overcommit (btrfs_flush_space)"),
}


def text(name, suffix):
    return (MEAS / f"{name}.{suffix}").read_text()


def build_record(name):
    d = {}
    for line in text(name, "kernel-build.txt").splitlines():
        k, _, v = line.partition(": ")
        d[k] = v
    out = {"release": d["release"], "source": d["source"], "config_sha256": d["config_sha256"],
           "image_sha256": d["image_sha256"]}
    if "patch" in d:
        out["patch"] = d["patch"]
    return out


def device(name):
    """the null_blk settings and queue the VM saved (lab/kernels/workloads/lib.vm.sh)"""
    d = dict(line.split(" ", 1) for line in text(name, "device.txt").splitlines())
    return {"device_service_ms": int(d["service_ms"]), "device_size_bytes": int(d["nullb/size"]) << 20,
            "device_queue_depth": int(d["nullb/hw_queue_depth"]), "device_stable_writes": int(d["queue/stable_writes"]),
            "device_scheduler": d["queue/scheduler"]}


def meminfo_kb(s, key):
    m = re.search(rf"{key}:\s+(\d+) kB", s)
    return int(m.group(1)) if m else None


def kv_lines(s):
    return {p[0]: int(p[1]) for p in (l.split() for l in s.splitlines()) if len(p) == 2 and p[1].isdigit()}


def m_sync(name):
    at = text(name, "meminfo-at-sync.txt")
    w1 = dict(x.split("=") for x in text(name, "writer1.txt").split())
    w2 = dict(x.split("=") for x in text(name, "writer2.txt").split())
    return {"sync_wall_seconds": mm.epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
            "dirty_kb_at_sync": meminfo_kb(at, "Dirty"), "writeback_kb_at_sync": meminfo_kb(at, "Writeback"),
            "files_before_sync": int(w1["files"]), "files_written_alongside": int(w2["files"])}


def m_stable(name):
    _, w = mm.fio_job(MEAS / f"{name}.fio.json", "write")
    c = w["clat_ns"]
    return {"fio_write_count": w["total_ios"], "fio_write_clat_mean_us": mm.us(c["mean"]),
            "fio_write_clat_p50_us": mm.us(mm.pct(c, 50)), "fio_write_clat_p99_us": mm.us(mm.pct(c, 99)),
            "fio_write_clat_max_us": mm.us(c["max"]), "stable_writes": int(text(name, "stable_writes.txt"))}


def m_snapshot(name):
    _, w = mm.fio_job(MEAS / f"{name}.fio.json", "write")
    io = json.loads(text(name, "snapshot-ioctl.json"))
    at = text(name, "meminfo-at-snapshot.txt")
    return {"snapshot_ioctl_ns": io["ioctl_ns"], "snapshot_ioctl_cmd": io["cmd"],
            "snapshot_wall_seconds": mm.epoch_pair(MEAS / f"{name}.snapshot-epoch.txt"),
            "dirty_kb_at_snapshot": meminfo_kb(at, "Dirty"), "writeback_kb_at_snapshot": meminfo_kb(at, "Writeback"),
            "fio_writer_bw_kib_per_s": w["bw"], "fio_writer_runtime_ms": w["runtime"]}


def m_fsync(name):
    j, w = mm.fio_job(MEAS / f"{name}.fio.json", "write")
    s = j["sync"]["lat_ns"]
    out = {"fio_jobs_grouped": True, "fio_write_count": w["total_ios"], "fio_fsync_count": j["sync"]["total_ios"],
           "fio_fsync_lat_mean_us": mm.us(s["mean"])}
    for p in (50, 90, 99):
        out[f"fio_fsync_lat_p{p}_us"] = mm.us(mm.pct(s, p))
    out["fio_fsync_lat_max_us"] = mm.us(s["max"])
    c0, c1 = kv_lines(text(name, "memcg-before.txt")), kv_lines(text(name, "memcg-after.txt"))
    v0, v1 = mm.vmstat(MEAS / f"{name}.vmstat-before.txt"), mm.vmstat(MEAS / f"{name}.vmstat-after.txt")
    out.update({"memcg_max_events_delta": c1.get("max", 0) - c0.get("max", 0),
                "memcg_file_bytes_before": c0.get("file"), "memcg_file_bytes_after": c1.get("file"),
                "vmstat_pgscan_direct": v1["pgscan_direct"] - v0["pgscan_direct"],
                "vmstat_pgsteal_direct": v1["pgsteal_direct"] - v0["pgsteal_direct"]})
    return out


def free_estimated(s):
    return int(re.search(r"Free \(estimated\):\s+(\d+)", s).group(1))


def m_untar(name):
    return {"tar_wall_seconds": mm.epoch_pair(MEAS / f"{name}.tar-epoch.txt"),
            "sync_wall_seconds": mm.epoch_pair(MEAS / f"{name}.sync-epoch.txt"),
            "btrfs_free_estimated_bytes_before": free_estimated(text(name, "fs-usage-before.txt")),
            "btrfs_free_estimated_bytes_after": free_estimated(text(name, "fs-usage-after.txt"))}


MEASURE = {"btrfs-delalloc-overflush": m_untar, "sync-flusher-stall": m_sync, "stable-page-wait": m_stable,
           "btrfs-snapshot-livelock": m_snapshot, "btrfs-full-fsync-fallback": m_fsync}


def entry(path: Path) -> dict:
    stem = path.name[:-len(".dat")]
    m = NAME_RE.match(stem)
    rule, side, run = m["rule"], m["side"], int(m["run"])
    pair, workload = WORKLOADS[rule]
    ver, comp, ks, clock = mm.dump_summary(path)
    counts, lost, markers, overrun = mm.report_counts(path, comp)
    uname_a = text(stem, "uname.txt").strip()
    e = {"file": path.name, "kind": "trace.dat", "bytes": path.stat().st_size, "file_version": ver,
         "compression": comp, "kallsyms_masked": ks == 0, "kallsyms_bytes": ks, "paired_with": None,
         "kernel_variant": "stock" if side == "stock" else f"revert:{rule}", "pair": pair, "rule": rule, "run": run,
         "kernel": uname_a.split()[2], "kernel_build": build_record(stem), "workload": workload, "uname_a": uname_a,
         "capture_script": f"lab/kernels/capture.sh {rule} {side} {run} (in the VM: lab/kernels/workloads/{rule}.vm.sh)",
         "events": mm.enabled_events(stem), "device": DEVICE, **device(stem),
         "event_count": sum(counts.counts.values()), "lost_events": lost, "lost_event_markers": markers,
         "trace_span_seconds": counts.span(),
         "event_counts": dict(sorted(counts.counts.items(), key=lambda kv: -kv[1])),
         "trace_clock": clock, "tool": "trace-cmd 3.1.6 (Debian 12) record", "cpu_stats_overrun": overrun,
         "measurements": MEASURE[rule](stem)}
    return e


def entries():
    out = [entry(p) for p in sorted(ROOT.glob("lab-*-v7-zstd.dat"))]
    for e in out:
        print(f"{e['file']}: {e['bytes']} bytes, {e['event_count']} events, lost {e['lost_events']}, "
              f"{e['kernel']} {e['kernel_variant']}", file=sys.stderr)
    return out


def main():
    mm.merge_entries(entries())


if __name__ == "__main__":
    main()
