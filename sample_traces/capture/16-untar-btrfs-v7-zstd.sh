#!/bin/bash
# Capture 16: untar-btrfs-v7-zstd.dat
# Untar of a source-tree-like tarball (20,000 small text files, 110 MB, made locally by
# capture/make-src-tarball.py) onto a fresh 1 GiB btrfs, then sync.  Each dirty file
# reserves metadata for its delalloc extent (a few hundred KiB of worst-case tree space per
# outstanding extent), so on a filesystem this small the metadata reservations overcommit
# within the first thousand files and space reclaim flushes delalloc (btrfs_flush_space
# FLUSH_DELALLOC*, btrfs:extent_writepage) over and over: the seed's untar workload.
# v7, zstd, kallsyms masked (capture/tc-record-small) to stay under 3 MB.
# Outside the trace: `time tar` (bash, real) and date +%s.%N around tar and around sync,
# /sys/block/loopN/stat before/after (sectors written), btrfs sysfs commit_stats and
# allocation counters before/after, and the page-rounded sizes of the tarball's files.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=untar-btrfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
FILES=${FILES:-20000}; SIZE=${SIZE:-1G}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
[ -f "$WORK/src-$FILES.tar" ] || "$CAPTURE_DIR/make-src-tarball.py" "$WORK/src-$FILES.tar" "$FILES"
DEV=$(setup_loop "$IMG" "$SIZE")
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
FSID=$(btrfs filesystem show --raw "$MNT" | awk '/uuid:/ {print $NF; exit}')
log "device $DEV bdi $BDI devt $DEVT fsid $FSID"
sync

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args 'comm == "sync"' sync
  ev_args btrfs:btrfs_flush_space btrfs:btrfs_trigger_flush btrfs:btrfs_reserve_ticket \
          btrfs:extent_writepage btrfs:btrfs_transaction_commit
)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
# page-rounded size of every regular file in the tarball: the data pages the untar dirties
python3 - "$WORK/src-$FILES.tar" > "$M.tarball.json" <<'PY'
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
           allocation/data/bytes_used allocation/data/total_bytes allocation/metadata/disk_used; do
    [ -e "$SYSFS/\$f" ] && sed "s|^|\$f |" "$SYSFS/\$f"
  done
}
snap > "$M.before.txt"
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time tar -xf "$WORK/src-$FILES.tar" -C "$MNT" ; } 2> "$M.tar-time.txt"
t1=\$(date +%s.%N)
sync
t2=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.tar-epoch.txt"
echo "\$t1 \$t2" > "$M.sync-epoch.txt"
snap > "$M.after.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
"$TC_RECORD_SMALL" -q -b 40000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
btrfs filesystem usage -b "$MNT" > "$M.fs-usage.txt"
trace_summary "$OUTDIR/$NAME.dat"
cat "$M.tar-time.txt" "$M.tar-epoch.txt" "$M.sync-epoch.txt" "$M.tarball.json" >&2
