#!/bin/bash
# Capture 3: sync-xfs-v6.dat
# xfs on a 2 GiB loop device; fs_mark creates 16 KiB files (no fsync, -S 0) while a
# `sync` runs mid-way.  fs_mark is throttled with a cgroup-v1 CPU quota (10% of a CPU,
# about 4000 files/s here) so that it keeps dirtying for ~1-2 s with a bounded event
# count.  Trace file version 6 (uncompressed by definition), kallsyms hidden
# (capture/tc-record-small).
# Outside the trace: `sync` wall time (bash time + date +%s.%N) and fs_mark's output.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=sync-xfs-v6
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
NFILES=${NFILES:-500}; LOOPS=${LOOPS:-12}; SYNC_AFTER=${SYNC_AFTER:-1.0}
CG=/sys/fs/cgroup/cpu/wa-capture-fsmark
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 2G)
mkdir -p "$CG"; echo 10000 > "$CG/cpu.cfs_period_us"; echo 1000 > "$CG/cpu.cfs_quota_us"
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"; rm_cgroup "$CG"' EXIT
mkfs.xfs -q -f "$DEV"
mount "$DEV" "$MNT"; mkdir "$MNT/x"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args 'comm == "sync" || comm == "fs_mark"' sync syncfs
)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
cd "$WORK"   # fs_mark writes fs_log.txt into the current directory
bash -c 'echo \$\$ > "$CG/cgroup.procs"; exec fs_mark -d "$MNT/x" -n $NFILES -s 16384 -S 0 -L $LOOPS -k' > "$M.fs_mark.txt" 2>&1 &
FSM=\$!
sleep $SYNC_AFTER
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time sync ; } 2> "$M.sync-time.txt"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.sync-epoch.txt"
wait \$FSM
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
"$TC_RECORD_SMALL" -q -b 40000 --file-version 6 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
cat "$M.sync-time.txt" "$M.sync-epoch.txt" >&2
