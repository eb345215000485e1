#!/bin/bash
# Capture 43: sync-fsmark-btrfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# Capture 38's scenario on btrfs, recorded as a btrfs user would: the whole writeback,
# block and btrfs subsystems. btrfs on an 8 GiB loop device (direct-io, writes capped at
# $DEV_MBPS MiB/s by blkio throttle); fs_mark creating 4 KiB files (-S 0: no fsync) with
# $THREADS threads, $FILES files per thread per loop, $LOOPS loops, in $DIRS
# subdirectories; after $SYNC_AFTER s a `sync` while fs_mark keeps creating files.
# btrfs's sync(2) differs from xfs's and ext4's: btrfs_sync_fs commits a transaction,
# and small files may be stored inline in the btree (max_inline, 2048 bytes by default:
# these 4 KiB files are not), so their data still goes through delalloc and extent
# writepage.
# Events: writeback and block (filtered to btrfs's own bdi, btrfs-N, and to this
# device: btrfs does not write through the loop device's bdi), the whole btrfs subsystem
# (unfiltered), sync/syncfs/fsync/fdatasync of sync and fs_mark; trace clock mono; v7 zstd,
# kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, fs_mark's own report, inode
# counts (df -i: 0 on btrfs, which keeps no inode count) and Dirty/Writeback (/proc/meminfo)
# before the sync, after the sync and at the end, the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-fsmark-btrfs-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-bsync$RUN   # fs_mark wants a directory path under 40 bytes
THREADS=${THREADS:-2}; FILES=${FILES:-2000}; LOOPS=${LOOPS:-2}; DIRS=${DIRS:-100}
SYNC_AFTER=${SYNC_AFTER:-2}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-4}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 8G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"; mkdir "$MNT/x"
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "sync" || comm == "fs_mark"' \
  "sync syncfs fsync fdatasync" -- writeback block btrfs)
fsmark_sync_record "$NAME" 4096 -- "${ARGS[@]}"
