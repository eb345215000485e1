#!/bin/bash
# Capture 44: sync-chmod-ext4-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# A sync that writes inodes whose pages were written earlier in the capture and which
# turned dirty again in their metadata only. ext4 on a 2 GiB loop device (direct-io,
# writes capped at $DEV_MBPS MiB/s); inside the recording: $FILES files of 8 KiB written
# in $DIRS directories, `sync -f` (syncfs) of the filesystem, which writes them and leaves
# them clean; then `chmod 600` on every file (metadata only), dd of $BIG_MB MB into one
# new file (buffered, 1 MiB blocks), and `sync`.
# Recorded: the whole writeback and block subsystems and the sync, syncfs, fsync and
# fdatasync calls of every task, nothing filtered. trace clock mono; v7 zstd, kallsyms
# hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, Dirty/Writeback
# (/proc/meminfo) and the loop device's stat before and after the sync.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-chmod-ext4-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-chmod$RUN
FILES=${FILES:-3000}; DIRS=${DIRS:-30}; BIG_MB=${BIG_MB:-24}; DEV_MBPS=${DEV_MBPS:-16}
BUF=${BUF:-20000}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 2G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

mapfile -t ARGS < <(ev_args writeback block; sys_event_args "" sync syncfs fsync fdatasync)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
set -e
$(loop_state_line "$DEV")
state start > "$M.state.txt"
python3 - <<'PY'
import os
for i in range($FILES):
    d = os.path.join("$MNT", "d%02d" % (i % $DIRS))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(8192))
PY
sync -f "$MNT"
find "$MNT" -type f -exec chmod 600 {} +
dd if=/dev/zero of="$MNT/big" bs=1M count=$BIG_MB status=none
$(timed_sync_lines "$M")
WL
record_sync_workload "$NAME" "${ARGS[@]}"
