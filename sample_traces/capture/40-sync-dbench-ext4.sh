#!/bin/bash
# Capture 40: sync-dbench-ext4-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# A sync while dbench runs on ext4: dbench creates, writes, fsyncs and deletes its files
# all along, so most of what it dirties is deleted before any writeback reaches it, and
# inode numbers come back for the next files. ext4 on a 4 GiB loop device (direct-io,
# writes capped at $DEV_MBPS MiB/s by blkio throttle); dbench $CLIENTS clients for $SECS s
# with Debian's client.txt load; after $SYNC_AFTER s a `sync` while dbench goes on.
# Recorded like a user would: the whole writeback and block subsystems (filtered to this
# device), the whole ext4 subsystem (unfiltered), sync/syncfs/fsync/fdatasync of dbench
# and sync; trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, dbench's own report,
# Dirty/Writeback (/proc/meminfo) and the loop device's stat before and after the sync,
# the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-dbench-ext4-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
CLIENTS=${CLIENTS:-4}; SECS=${SECS:-8}; SYNC_AFTER=${SYNC_AFTER:-4}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-8}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "sync" || comm == "dbench"' \
  "sync syncfs fsync fdatasync" -- writeback block ext4)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
$(loop_state_line "$DEV")
state start > "$M.state.txt"
cd "$MNT"
dbench -D "$MNT" -t $SECS -c /usr/share/dbench/client.txt $CLIENTS > "$M.dbench.txt" 2>&1 &
DB=\$!
sleep $SYNC_AFTER
$(timed_sync_lines "$M")
wait \$DB
state end >> "$M.state.txt"
WL
record_sync_workload "$NAME" "${ARGS[@]}"
tail -22 "$M.dbench.txt" >&2
