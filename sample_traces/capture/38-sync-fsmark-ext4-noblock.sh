#!/bin/bash
# Capture 38: sync-fsmark-ext4-noblock-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# Capture 20's scenario on ext4, recorded without the block layer, as a user who records
# the writeback code and the filesystem would: ext4 on an 8 GiB loop device (direct-io,
# writes capped at $DEV_MBPS MiB/s by blkio throttle); fs_mark creating 4 KiB files (-S 0:
# no fsync) with $THREADS threads, $FILES files per thread per loop, $LOOPS loops, in $DIRS
# subdirectories; after $SYNC_AFTER s a `sync` while fs_mark keeps creating files.
# Events: the whole writeback subsystem (filtered to this device), the whole ext4 and jbd2
# subsystems (unfiltered), sync/syncfs/fsync/fdatasync of sync and fs_mark; no block
# events, so the device is seen only through inodes entering and leaving writeback.
# trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, fs_mark's own report, inode
# counts (df -i) and Dirty/Writeback (/proc/meminfo) before the sync, after the sync and at
# the end, the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-fsmark-ext4-noblock-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-e4sync$RUN   # fs_mark wants a directory path under 40 bytes
THREADS=${THREADS:-2}; FILES=${FILES:-5000}; LOOPS=${LOOPS:-2}; DIRS=${DIRS:-100}
SYNC_AFTER=${SYNC_AFTER:-3}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-8}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 8G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"; mkdir "$MNT/x"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "sync" || comm == "fs_mark"' \
  "sync syncfs fsync fdatasync" -- writeback ext4 jbd2)
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
