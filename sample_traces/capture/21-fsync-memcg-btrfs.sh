#!/bin/bash
# Capture 21: fsync-memcg-btrfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# fsync-heavy writers in a memory-limited cgroup: btrfs on a 4 GiB loop device (direct-io,
# writes capped at $DEV_MBPS MiB/s by blkio throttle); $JOBS fio jobs (psync, 4k random
# buffered writes, an fsync every $FSYNC_EVERY writes, each job its own $JOB_SIZE file: a
# database's files, much larger than the cgroup may cache) run for $RUNTIME s in a memory
# cgroup limited to $MEMCG_MB MiB.  Before tracing, the files are written sequentially from
# inside the cgroup (so their page cache is charged there and the cgroup starts full; fio
# --invalidate=0 keeps that cache when the traced run starts).  The
# page cache the random writes add is charged to that cgroup, so its limit reclaims it:
# mm_vmscan_memcg_reclaim_begin/end, mm_vmscan_lru_shrink_inactive.
# This host mounts the memory controller on the cgroup v1 hierarchy (cgroup2 here has only
# hugetlb), so the limit is v1 memory.limit_in_bytes, set on a child of this shell's memory
# cgroup; it reclaims by the same path as v2 memory.max (try_to_free_mem_cgroup_pages).
# Recorded like a user would: the whole writeback, block and vmscan subsystems (writeback
# and block filtered to this device), a handful of btrfs events (the whole btrfs subsystem
# is ~200 events per fsynced 4k write here: 10 MB for ~6,000 writes), fio's
# fsync/fdatasync/sync/syncfs/pwrite64;
# trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: fio's JSON (its own fsync latency percentiles: jobs[].sync.lat_ns),
# the cgroup's memory.stat, failcnt and max_usage before/after, /proc/vmstat before/after,
# the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}; TEXT=${TEXT:-0}
NAME=fsync-memcg-btrfs-run$RUN-v7-zstd
# TEXT=1 (capture 24): events enabled by hand in tracefs, default buffer, `cat trace`
[ "$TEXT" = 1 ] && NAME=fsync-memcg-btrfs-run$RUN-tracefs
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
JOBS=${JOBS:-4}; JOB_SIZE=${JOB_SIZE:-256M}; FSYNC_EVERY=${FSYNC_EVERY:-8}; RUNTIME=${RUNTIME:-25}
TEXT_BUF_KB=${TEXT_BUF_KB:-1408}   # tracefs' own default buffer_size_kb on this host
RATE_IOPS=${RATE_IOPS:-0}; MEMCG_MB=${MEMCG_MB:-128}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-40}
CG=/sys/fs/cgroup/memory$(awk -F: '$2=="memory" {print $3}' /proc/self/cgroup)/wa-capture-$NAME
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"; rm_cgroup "$CG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"; mkdir "$MNT/db"
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
mkdir -p "$CG"; echo $((MEMCG_MB * 1048576)) > "$CG/memory.limit_in_bytes"
log "device $DEV bdi $BDI devt $DEVT memcg $CG limit $(cat "$CG/memory.limit_in_bytes")"
# lay the files out from inside the cgroup (not traced): their cache is charged there
bash -c 'echo $$ > "'"$CG"'/cgroup.procs"; exec fio --name=fsyncw --directory="'"$MNT/db"'" --rw=write --bs=1M \
  --size='"$JOB_SIZE"' --numjobs='"$JOBS"' --end_fsync=1' > "$WORK/prep.txt"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "fio"' \
  "sync syncfs fsync fdatasync pwrite64" -- writeback block vmscan \
  btrfs:btrfs_sync_file btrfs:btrfs_transaction_commit btrfs:btrfs_flush_space \
  btrfs:btrfs_trigger_flush btrfs:btrfs_reserve_ticket btrfs:extent_writepage \
  btrfs:btrfs_ordered_extent_start)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
RATE_ARG=""; [ "$RATE_IOPS" != 0 ] && RATE_ARG="--rate_iops=$RATE_IOPS"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
cg() { for f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes memory.failcnt; do echo "\$f \$(cat $CG/\$f)"; done; sed 's/^/memory.stat /' $CG/memory.stat; }
cg > "$M.memcg-before.txt"; cat /proc/vmstat > "$M.vmstat-before.txt"
echo "before \$(cat /sys/block/${DEV#/dev/}/stat)" > "$M.loop-stat.txt"
bash -c 'echo \$\$ > "$CG/cgroup.procs"; exec fio --name=fsyncw --directory="$MNT/db" --ioengine=psync \
  --rw=randwrite --bs=4k --size=$JOB_SIZE --numjobs=$JOBS --fsync=$FSYNC_EVERY --invalidate=0 --group_reporting $RATE_ARG \
  --runtime=$RUNTIME --time_based --randrepeat=0 --output-format=json --output="$M.fio.json"'
echo "after \$(cat /sys/block/${DEV#/dev/}/stat)" >> "$M.loop-stat.txt"
cg > "$M.memcg-after.txt"; cat /proc/vmstat > "$M.vmstat-after.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
if [ "$TEXT" = 1 ]; then
  tracefs_record "$OUTDIR/$NAME.trace.txt" "$OUTDIR/$NAME.dat" "$TEXT_BUF_KB" "$WORK/workload.sh" -- "${ARGS[@]}"
  head -12 "$OUTDIR/$NAME.trace.txt" > "$M.trace-header.txt"; ls -l "$OUTDIR/$NAME.trace.txt" >&2
else
  "$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
fi
after_record "$NAME" "$OUTDIR/$NAME.dat"
python3 - "$M.fio.json" >&2 <<'PY'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    s = j["sync"]["lat_ns"]; w = j["write"]
    print(j["jobname"], "writes", w["total_ios"], "fsyncs", j["sync"]["total_ios"],
          "fsync p50/p99/max ms", s["percentile"]["50.000000"] / 1e6, s["percentile"]["99.000000"] / 1e6, s["max"] / 1e6)
PY
grep -E 'failcnt|max_usage' "$M.memcg-after.txt" >&2
