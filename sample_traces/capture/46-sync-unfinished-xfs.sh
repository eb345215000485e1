#!/bin/bash
# Capture 46: a sync(2) whose return the capture does not show, two ways.
#   VARIANT=running: sync-running-xfs-v7-zstd.dat. The recording stops while the sync is
#     still writing, as when a user records a hung sync for a while and stops: `sync &`
#     then `sleep $RECORD_AFTER_SYNC`, and trace-cmd ends with the workload's shell. A
#     logger appends a line to a file every 50 ms throughout, so the capture has events
#     up to its end (xfs dirties the dd's data in large folios: without it, the last
#     event came 1.2 ms after the sync began, while the sync ran 4 s).
#   VARIANT=lost: sync-lost-xfs-v7-zstd.dat. The sync returns inside the recording, but
#     the kernel drops events while it runs: fs_mark keeps creating small files during the
#     sync and the per-CPU buffers are $LOST_BUF KiB.
# xfs on a 2 GiB loop device (direct-io, writes capped at $DEV_MBPS MiB/s); $BIG_MB MB of
# dd (buffered, 1 MiB blocks) before the sync. Recorded: the whole writeback and block
# subsystems and the sync, syncfs, fsync and fdatasync calls of every task, unfiltered;
# trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace (measurements/NAME.*): the sync's start and end (date +%s.%N; for
# "running" the end comes after the recording stopped), and the machine's facts.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
VARIANT=${VARIANT:-running}
NAME=sync-$VARIANT-xfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-unfinished
BIG_MB=${BIG_MB:-96}; DEV_MBPS=${DEV_MBPS:-24}; RECORD_AFTER_SYNC=${RECORD_AFTER_SYNC:-2}
LOST_BUF=${LOST_BUF:-16}; FILES=${FILES:-20000}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 2G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.xfs -q -f "$DEV"
mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

mapfile -t ARGS < <(ev_args writeback block; sys_event_args "" sync syncfs fsync fdatasync)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
rm -f "$M.sync-epoch.txt"
if [ "$VARIANT" = running ]; then
  BUF=${BUF:-20000}
  cat > "$WORK/workload.sh" <<WL
#!/bin/bash
set -e
( while :; do date >> "$MNT/log"; sleep 0.05; done ) &
dd if=/dev/zero of="$MNT/big" bs=1M count=$BIG_MB status=none
# The sync outlives the recording: its end is written after trace-cmd stopped.
( t0=\$(date +%s.%N); sync; echo "\$t0 \$(date +%s.%N)" > "$M.sync-epoch.txt" ) &
sleep $RECORD_AFTER_SYNC
kill %1
WL
else
  BUF=$LOST_BUF
  cat > "$WORK/workload.sh" <<WL
#!/bin/bash
set -e
dd if=/dev/zero of="$MNT/big" bs=1M count=$BIG_MB status=none
mkdir -p "$MNT/small"
fs_mark -d "$MNT/small" -n $FILES -s 4096 -S 0 -L 1 > /dev/null 2>&1 &
FSM=\$!
sleep 0.3
t0=\$(date +%s.%N); sync; echo "\$t0 \$(date +%s.%N)" > "$M.sync-epoch.txt"
wait \$FSM
WL
fi
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
while [ ! -s "$M.sync-epoch.txt" ]; do sleep 0.2; done
after_record "$NAME" "$OUTDIR/$NAME.dat"
cat "$M.sync-epoch.txt" >&2
