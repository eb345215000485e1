#!/bin/bash
# Capture 1: fio-ext4-v7-zstd.dat
# ext4 on a 2 GiB loop device; fio buffered 4k random writes with an fsync every 32
# writes, 5 s, rate-limited to 8000 IOPS to keep the file small.
# trace-cmd defaults: file version 7, zstd, real /proc/kallsyms.
# Outside the trace: fio's JSON output (fsync/sync latency percentiles).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=fio-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
RUNTIME=${RUNTIME:-5}
RATE_IOPS=${RATE_IOPS:-8000}   # caps the event count (unthrottled: ~26k IOPS, ~8 MB trace)
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 2G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"

# lay the file out first so the traced run is pure overwrite + fsync
fio --name=prep --filename="$MNT/fio.dat" --rw=write --bs=1M --size=256M --end_fsync=1 >/dev/null
sync; echo 3 > /proc/sys/vm/drop_caches

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_bio_queue block_rq_insert block_rq_issue block_rq_complete
  sys_event_args 'comm == "fio"' write pwrite64 fsync fdatasync
  for e in ext4_sync_file_enter ext4_sync_file_exit ext4_writepages ext4_writepages_result; do
    printf '%s\n' -e "ext4:$e" -f "dev == $DEVT"
  done
)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
exec fio --name=randw --filename="$MNT/fio.dat" --ioengine=psync --rw=randwrite --bs=4k \
  --size=256M --fsync=32 --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \
  --output-format=json --output="$OUTDIR/measurements/$NAME.fio.json"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
date +%s.%N > "$WORK/t0"
"$TC_RECORD" -q -b 40000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
date +%s.%N > "$WORK/t1"
trace_summary "$OUTDIR/$NAME.dat"
