#!/bin/bash
# Capture 6: stable-pages-ext4-v7-zstd.dat
# ext4 on a 1 GiB loop device whose queue has stable_writes=1 (set before mkfs/mount;
# the flag is sampled into the superblock at mount time).  fio rewrites a 256 KiB file
# (64 pages) sequentially, over and over, with buffered 4k writes and starts writeback
# of what it wrote every 64 writes with sync_file_range(SYNC_FILE_RANGE_WRITE).  The
# next pass then writes to folios that are still under writeback and waits in
# folio_wait_stable() -> writeback:folio_wait_writeback.  Rate-limited to 8000 IOPS.
# sched_switch is recorded only when fio blocks in D state (prev_state == 2).
# trace-cmd defaults (v7, zstd, real kallsyms).
# Outside the trace: fio JSON (write latency percentiles, max); with CONTROL=1 (default)
# the same fio job is also run untraced on stable_writes=1 and stable_writes=0 devices.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=stable-pages-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
RUNTIME=${RUNTIME:-4}; SIZE=${SIZE:-256k}; RATE_IOPS=${RATE_IOPS:-8000}; CONTROL=${CONTROL:-1}
M=$OUTDIR/measurements/$NAME
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1

fio_job() {  # fio_job DIR OUTPUT_JSON
  echo fio --name=rewrite --filename="$1/rewrite.dat" --ioengine=psync --rw=write --bs=4k \
    --size=$SIZE --sync_file_range=write:64 --rate_iops=$RATE_IOPS --runtime=$RUNTIME \
    --time_based --randrepeat=0 --output-format=json --output="$2"
}
prep() {  # prep DEV: mkfs, mount, lay out the file, start clean
  mkfs.ext4 -q -F "$1"; mount "$1" "$MNT"
  fio --name=prep --filename="$MNT/rewrite.dat" --rw=write --bs=$SIZE --size=$SIZE --end_fsync=1 >/dev/null
  sync; echo 3 > /proc/sys/vm/drop_caches
}

DEV=""
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
if [ "$CONTROL" = 1 ]; then
  for sw in 0 1; do
    DEV=$(setup_loop "$IMG" 1G $sw); prep "$DEV"
    echo "stable_writes=$(cat /sys/block/${DEV#/dev/}/queue/stable_writes)" > "$M.control-sw$sw.txt"
    $(fio_job "$MNT" "$M.control-sw$sw.fio.json")
    cleanup_fs "$MNT" "$DEV" "$IMG"; DEV=""
  done
fi

DEV=$(setup_loop "$IMG" 1G 1)
cat /sys/block/${DEV#/dev/}/queue/stable_writes > "$M.stable_writes.txt"
prep "$DEV"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT stable_writes=$(cat "$M.stable_writes.txt")"

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args 'comm == "fio"' pwrite64 sync_file_range
  printf '%s\n' -e sched:sched_switch -f 'prev_comm == "fio" && prev_state == 2'
)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
exec $(fio_job "$MNT" "$M.fio.json")
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
"$TC_RECORD" -q -b 40000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
