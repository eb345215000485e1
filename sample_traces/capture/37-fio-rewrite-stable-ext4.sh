#!/bin/bash
# Capture 37: fio-rewrite-stable-ext4-run$RUN-v7-zstd.dat  (RUN=1 fit, RUN=2 holdout)
# Writes waiting on pages under writeback, recorded the way users record: ext4 on a 1 GiB
# loop device (direct-io) whose queue has stable_writes=1 (set before mkfs and mount; the
# flag is copied into the superblock at mount time); fio rewrites a $SIZE file with
# buffered 4 KiB pwrite64 calls at $RATE_IOPS IOPS for $RUNTIME s and starts writeback of
# what it wrote every 64 writes with sync_file_range(SYNC_FILE_RANGE_WRITE).  The file is
# 32 pages, so each pass over it also reopens it, and fio's default invalidate=1 calls
# posix_fadvise(POSIX_FADV_DONTNEED), which starts writeback too; that call is not
# recorded, as a user who asks for the write and sync calls would not record it.
# Events: the whole writeback and block subsystems (filtered to this device), sched_switch
# and sched_wakeup, fio's pwrite64 and sync_file_range; trace-cmd's defaults otherwise
# (v7, zstd, local clock), kallsyms hidden (capture/tc-record-small).
# Outside the trace: fio's JSON (write latency percentiles, max), the stable_writes value
# read back, the device setup, the host's load and tool versions.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=fio-rewrite-stable-ext4-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
RUNTIME=${RUNTIME:-3}; SIZE=${SIZE:-128k}; RATE_IOPS=${RATE_IOPS:-10000}; BUF=${BUF:-40000}
M=$OUTDIR/measurements/$NAME
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G 1)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
fio --name=prep --filename="$MNT/rewrite.dat" --rw=write --bs=$SIZE --size=$SIZE --end_fsync=1 >/dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
cat "/sys/block/${DEV#/dev/}/queue/stable_writes" > "$M.stable_writes.txt"
log "device $DEV bdi $BDI devt $DEVT stable_writes=$(cat "$M.stable_writes.txt")"

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "fio"' "pwrite64 sync_file_range" -- writeback block
                    printf '%s\n' -e sched:sched_switch -e sched:sched_wakeup)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
exec fio --name=rewrite --filename="$MNT/rewrite.dat" --ioengine=psync --rw=write --bs=4k --size=$SIZE \
  --sync_file_range=write:64 --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \
  --output-format=json --output="$M.fio.json"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
after_record "$NAME" "$OUTDIR/$NAME.dat"
