#!/bin/bash
# Capture 23: untar-full-btrfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# The delalloc-overflush seed's untar under space pressure, at real scale: btrfs on a
# $SIZE loop device (direct-io, writes capped at $DEV_MBPS MiB/s by blkio throttle), filled
# before tracing by a fallocated file until about $FREE_MB MiB of data space is left
# (fallocate allocates the data chunks, so metadata cannot grow into free space any more);
# then, traced, tar -xf of a source-tree-like tarball ($FILES text files, made locally by
# capture/make-src-tarball.py) and sync.  Metadata reservations of the dirty files
# overcommit what is left, so space reclaim flushes (btrfs_flush_space, tickets).
# Recorded like a user would: the whole writeback, block and btrfs subsystems (writeback
# and block filtered to this device), the sync/syncfs/fsync/fdatasync/write syscalls of tar
# and sync; trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time tar` and date +%s.%N around tar and around sync, btrfs
# filesystem usage before and after, btrfs sysfs allocation counters before/after, the
# loop device's stat, the tarball's file count and page-rounded size, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=untar-full-btrfs-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
FILES=${FILES:-3500}; SIZE=${SIZE:-2G}; FREE_MB=${FREE_MB:-150}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-40}
TARBALL=/tmp/wa-capture/src-$FILES.tar
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
[ -f "$TARBALL" ] || "$HERE/make-src-tarball.py" "$TARBALL" "$FILES"
DEV=$(setup_loop "$IMG" "$SIZE")
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
FSID=$(btrfs filesystem show --raw "$MNT" | awk '/uuid:/ {print $NF; exit}')
M=$OUTDIR/measurements/$NAME
# fill: fallocate what is free in data space, less FREE_MB (btrfs fi usage -b: "Free (estimated)")
free_b=$(btrfs filesystem usage -b "$MNT" | awk '/Free \(estimated\):/ {print $3; exit}')
fill=$(( free_b - FREE_MB * 1048576 ))
fallocate -l "$fill" "$MNT/fill"
sync
btrfs filesystem usage -b "$MNT" > "$M.fs-usage-before.txt"
log "device $DEV bdi $BDI devt $DEVT fsid $FSID; filled $fill of $free_b free bytes"

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "tar" || comm == "sync"' \
  "sync syncfs fsync fdatasync write" -- writeback block btrfs)
save_args "$NAME" "${ARGS[@]}"
python3 - "$TARBALL" > "$M.tarball.json" <<'PY'
import json, sys, tarfile
sizes = [m.size for m in tarfile.open(sys.argv[1]) if m.isfile()]
print(json.dumps({"files": len(sizes), "file_bytes": sum(sizes),
                  "file_pages_4k": sum(-(-s // 4096) for s in sizes),
                  "files_up_to_2048_bytes": sum(s <= 2048 for s in sizes)}))
PY
SYSFS=/sys/fs/btrfs/$FSID
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
snap() {  # loop device stat line and btrfs counters, one "key value" a line
  echo "loop_stat \$(cat /sys/block/${DEV#/dev/}/stat)"
  for f in commit_stats allocation/metadata/bytes_used allocation/metadata/total_bytes \
           allocation/metadata/bytes_may_use allocation/metadata/bytes_reserved \
           allocation/data/bytes_used allocation/data/total_bytes allocation/data/bytes_may_use \
           allocation/metadata/disk_used allocation/global_rsv_size allocation/global_rsv_reserved; do
    [ -e "$SYSFS/\$f" ] && sed "s|^|\$f |" "$SYSFS/\$f"
  done
}
snap > "$M.before.txt"
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time tar -xf "$TARBALL" -C "$MNT" ; } 2> "$M.tar-time.txt"
t1=\$(date +%s.%N)
{ time sync ; } 2> "$M.sync-time.txt"
t2=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.tar-epoch.txt"
echo "\$t1 \$t2" > "$M.sync-epoch.txt"
snap > "$M.after.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
btrfs filesystem usage -b "$MNT" > "$M.fs-usage-after.txt"
find "$MNT" -path "$MNT/fill" -prune -o -type f -print | wc -l > "$M.files-on-fs.txt"
after_record "$NAME" "$OUTDIR/$NAME.dat"
cat "$M.tar-time.txt" "$M.sync-time.txt" "$M.tar-epoch.txt" "$M.sync-epoch.txt" "$M.tarball.json" "$M.files-on-fs.txt" >&2
