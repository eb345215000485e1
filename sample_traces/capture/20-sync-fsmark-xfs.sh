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
fsmark_sync_record "$NAME" 4096 -- "${ARGS[@]}"
