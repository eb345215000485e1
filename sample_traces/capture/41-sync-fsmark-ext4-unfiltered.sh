#!/bin/bash
# Capture 41: sync-fsmark-ext4-unfiltered-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# Capture 38's scenario recorded with nothing filtered, as most users record: the whole
# writeback and block subsystems and the sync/syncfs/fsync/fdatasync calls of every task.
# So the capture also holds the host's own filesystem (/dev/vda, 254:0, where the loop
# device's image and this trace file are written): its dirtying, inode writeback and
# page waits, and its block requests, which include the loop device's writes again.
# ext4 on an 8 GiB loop device (direct-io, writes capped at $DEV_MBPS MiB/s by blkio
# throttle); fs_mark creating 8 KiB files (-S 0: no fsync) with $THREADS threads, $FILES
# files per thread per loop, $LOOPS loops, in $DIRS subdirectories; after $SYNC_AFTER s a
# `sync` while fs_mark keeps creating files.
# trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, fs_mark's own report, inode
# counts (df -i) and Dirty/Writeback (/proc/meminfo) before the sync, after the sync and at
# the end, the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-fsmark-ext4-unfiltered-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-e4unf$RUN   # fs_mark wants a directory path under 40 bytes
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

mapfile -t ARGS < <(ev_args writeback block; sys_event_args "" sync syncfs fsync fdatasync)
fsmark_sync_record "$NAME" 8192 -- "${ARGS[@]}"
