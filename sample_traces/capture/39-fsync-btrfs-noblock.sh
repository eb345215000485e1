#!/bin/bash
# Capture 39: fsync-btrfs-noblock-run$RUN-v7-zstd.dat  (RUN=1 fit, RUN=2 holdout)
# fsync-heavy writers on btrfs, recorded as a user who traces the writeback code and btrfs
# but not the block layer would: btrfs on a 4 GiB loop device (direct-io, writes capped
# at $DEV_MBPS MiB/s by blkio throttle); fio, $JOBS jobs, buffered 4 KiB random writes
# into their own $SIZE file with an fsync every $FSYNC_EVERY writes, for $RUNTIME s.
# Events: the whole writeback and btrfs subsystems, unfiltered (btrfs's inodes carry an
# anonymous device, not the loop device's), fio's write and fsync calls; no block events,
# so the log commits show only as btrfs's btree inode (inode 1) entering and leaving
# writeback inside the fsyncs. trace-cmd's defaults otherwise (v7, zstd, local clock),
# kallsyms hidden (capture/tc-record-small).
# Outside the trace: fio's JSON (fsync latency percentiles, max), the device setup, the
# host's load and tool versions.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=fsync-btrfs-noblock-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
JOBS=${JOBS:-2}; SIZE=${SIZE:-64m}; FSYNC_EVERY=${FSYNC_EVERY:-4}; RUNTIME=${RUNTIME:-6}
DEV_MBPS=${DEV_MBPS:-40}; BUF=${BUF:-20000}
M=$OUTDIR/measurements/$NAME
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.btrfs -q -f "$DEV"; mount "$DEV" "$MNT"
log "device $DEV"

mapfile -t ARGS < <(ev_args writeback btrfs; sys_event_args 'comm == "fio"' write fsync)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
exec fio --name=fsync --directory="$MNT" --ioengine=psync --rw=randwrite --bs=4k --size=$SIZE --numjobs=$JOBS \
  --fsync=$FSYNC_EVERY --runtime=$RUNTIME --time_based --output-format=json --output="$M.fio.json"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
after_record "$NAME" "$OUTDIR/$NAME.dat"
