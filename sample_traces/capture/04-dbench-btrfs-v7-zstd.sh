#!/bin/bash
# Capture 4: dbench-btrfs-v7-zstd.dat
# btrfs on a 4 GiB loop device; dbench (Debian's client.txt load, whose "Flush" ops are
# fsync(2)) with $CLIENTS clients for $SECS s.  No memory pressure (see README).
# trace-cmd defaults (v7, zstd, real kallsyms); HIDE_KALLSYMS=1 uses tc-record-small.
# Outside the trace: dbench's own throughput/latency report.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=dbench-btrfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
CLIENTS=${CLIENTS:-3}; SECS=${SECS:-4}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args 'comm == "dbench"' fsync fdatasync
  ev_args btrfs:btrfs_sync_file btrfs:btrfs_flush_space btrfs:btrfs_trigger_flush btrfs:btrfs_reserve_ticket \
          btrfs:btrfs_transaction_commit \
          vmscan:mm_vmscan_direct_reclaim_begin vmscan:mm_vmscan_direct_reclaim_end \
          vmscan:mm_vmscan_kswapd_wake vmscan:mm_vmscan_kswapd_sleep vmscan:mm_vmscan_write_folio
)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
cd "$MNT"
exec dbench -D "$MNT" -t $SECS -c /usr/share/dbench/client.txt $CLIENTS > "$M.dbench.txt" 2>&1
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
REC=$TC_RECORD; [ "${HIDE_KALLSYMS:-0}" = 1 ] && REC=$TC_RECORD_SMALL
"$REC" -q -b 40000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
tail -25 "$M.dbench.txt" >&2
