#!/bin/bash
# Capture 20: sync-fsmark-xfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# The sync-flusher-stall seed's scenario at real scale: xfs on an 8 GiB loop device
# (direct-io, writes capped at $DEV_MBPS MiB/s by blkio throttle); fs_mark creating 4 KiB
# files (the seed's size, no fsync: -S 0) with $THREADS threads, $FILES files per thread per
# loop, $LOOPS loops (100,000+ files), in $DIRS subdirectories; after $SYNC_AFTER s a
# `sync` while fs_mark keeps creating files.
# Recorded like a user would: the whole writeback and block subsystems (filtered to this
# device), sync/syncfs/fsync/fdatasync and write of sync and fs_mark; trace clock mono;
# v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, fs_mark's own report, inode
# counts (df -i) and Dirty/Writeback (/proc/meminfo) before the sync, after the sync and at
# the end, the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-fsmark-xfs-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-sync$RUN   # fs_mark wants a directory path under 40 bytes
THREADS=${THREADS:-2}; FILES=${FILES:-20000}; LOOPS=${LOOPS:-3}; DIRS=${DIRS:-100}
SYNC_AFTER=${SYNC_AFTER:-5}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-24}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 8G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.xfs -q -f "$DEV"
mount "$DEV" "$MNT"; mkdir "$MNT/x"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "sync" || comm == "fs_mark"' \
  "sync syncfs fsync fdatasync write" -- writeback block)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
state() {  # one line: label, used inodes, Dirty/Writeback kB, loop stat
  echo "\$1 \$(date +%s.%N) iused \$(df --output=iused "$MNT" | tail -1) \$(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ') loop_stat \$(cat /sys/block/${DEV#/dev/}/stat)"
}
state start > "$M.state.txt"
cd "$WORK"   # fs_mark writes fs_log.txt into the current directory
fs_mark -d "$MNT/x" -t $THREADS -D $DIRS -n $FILES -s 4096 -S 0 -L $LOOPS -k > "$M.fs_mark.txt" 2>&1 &
FSM=\$!
sleep $SYNC_AFTER
state before_sync >> "$M.state.txt"
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time sync ; } 2> "$M.sync-time.txt"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.sync-epoch.txt"
state after_sync >> "$M.state.txt"
wait \$FSM
state end >> "$M.state.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
after_record "$NAME" "$OUTDIR/$NAME.dat"
cat "$M.sync-time.txt" "$M.sync-epoch.txt" "$M.state.txt" >&2
tail -8 "$M.fs_mark.txt" >&2
