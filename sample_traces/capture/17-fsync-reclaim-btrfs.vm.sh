#!/bin/bash
# Capture 17, the part that runs INSIDE the VM (started by 17-fsync-reclaim-btrfs.sh through
# shared/lab/vm-run).  Usage: 17-fsync-reclaim-btrfs.vm.sh VMOUT DISK_SIZE [RUNTIME RATE_IOPS FSYNC_EVERY]
#
# btrfs on the whole scratch disk.  fio rewrites a 96 MiB file (over the 16 MiB above which
# btrfs releases extent maps on page release) with 4k random buffered writes and an fsync
# every FSYNC_EVERY writes.  Memory is taken first, before tracing starts: a hog fills a
# tmpfs (no swap: its pages cannot be reclaimed) in 64 MiB steps until MemAvailable is about
# HOG_LEAVE_MB.  During the traced run, 1 s after fio starts, a reader streams the scratch
# disk's block device (buffered, mostly unwritten sparse blocks, so cheap) through the page
# cache, 128 MiB at a time, until fio ends: the little memory left fills with clean cache,
# so kswapd wakes again and again and allocating tasks enter direct reclaim, releasing page
# cache (the fio file's pages among it) during the fsyncs, without the OOM risk of growing
# the hog further.  (First attempts grew the hog during the run: on the emulated CPU
# filling 1.5 GB took longer than fio's run, so the fsyncs saw no reclaim.)
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2
RUNTIME=${3:-20}; RATE_IOPS=${4:-200}; FSYNC_EVERY=${5:-4}; HOG_LEAVE_MB=${HOG_LEAVE_MB:-320}
NAME=fsync-reclaim-btrfs-v7-zstd
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")")
tool_versions > "$VMOUT/$NAME.versions.txt"
uname -a > "$VMOUT/$NAME.uname.txt"
sysctl_dirty > "$VMOUT/$NAME.sysctl.txt"

MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
fio --name=prep --filename="$MNT/db.dat" --rw=write --bs=1M --size=96M --end_fsync=1 > /dev/null
HOG=/tmp/wa-hog; mkdir -p "$HOG"; mount -t tmpfs -o size=1900m none "$HOG"
# the hog, before tracing: 64 MiB tmpfs files until MemAvailable <= HOG_LEAVE_MB (or the tmpfs is full)
i=0
while [ $(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo) -gt "$HOG_LEAVE_MB" ] && [ $i -lt 29 ]; do
  dd if=/dev/zero of="$HOG/h$i" bs=1M count=64 status=none || break
  i=$((i + 1))
done
echo "hog_files_64MiB=$i at $(date +%s.%N)" > "$BT_DIR/hog.txt"
grep -E 'MemAvailable|MemFree|^Cached' /proc/meminfo >> "$BT_DIR/hog.txt"

cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
cat /proc/meminfo > $BT_DIR/meminfo-before.txt; cat /proc/vmstat > $BT_DIR/vmstat-before.txt
fio --name=fsyncw --filename=$MNT/db.dat --ioengine=psync --rw=randwrite --bs=4k --size=96M \\
  --fsync=$FSYNC_EVERY --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \\
  --output-format=json --output=$BT_DIR/$NAME.fio.json &
FIO=\$!
sleep 1
# the cache streamer: buffered reads of the scratch disk, 128 MiB at a time, round and round
( off=0; while kill -0 \$FIO 2>/dev/null; do
    dd if=$DEV of=/dev/null bs=1M count=128 skip=\$off 2>> $BT_DIR/reader.txt; off=\$(( (off + 128) % 2048 )); done ) &
READER=\$!
wait \$FIO
wait \$READER
grep -E 'MemAvailable|MemFree|^Cached' /proc/meminfo >> $BT_DIR/hog.txt
cat /proc/meminfo > $BT_DIR/meminfo-after.txt; cat /proc/vmstat > $BT_DIR/vmstat-after.txt
WL
chmod +x "$BT_DIR/workload.sh"

TC_ARGS=(-b 20000
         -e btrfs:btrfs_sync_file -e btrfs:btrfs_flush_space -e btrfs:__extent_writepage
         -e btrfs:btrfs_transaction_commit
         -e vmscan:mm_vmscan_direct_reclaim_begin -e vmscan:mm_vmscan_direct_reclaim_end
         -e vmscan:mm_vmscan_kswapd_wake -e vmscan:mm_vmscan_kswapd_sleep -e vmscan:mm_vmscan_wakeup_kswapd
         -e writeback:writeback_dirty_folio -e writeback:folio_wait_writeback
         -e writeback:writeback_start -e writeback:writeback_written
         -e block:block_rq_issue -e block:block_rq_complete
         -e syscalls:sys_enter_fsync -f 'comm == "fio"' -e syscalls:sys_exit_fsync -f 'comm == "fio"'
         -e syscalls:sys_enter_fdatasync -f 'comm == "fio"' -e syscalls:sys_exit_fdatasync -f 'comm == "fio"')
printf '%s\n' "${TC_ARGS[@]}" > "$VMOUT/$NAME.record-args.txt"

cd "$BT_DIR"
date +%s.%N > "$BT_DIR/workload.epoch"
# kallsyms hidden (tc-small), as for the host captures: keeps the file small
"$BLK_CAPTURE_DIR/tc-small" record -q "${TC_ARGS[@]}" -o "$BT_DIR/$NAME.dat" "$BT_DIR/workload.sh"
date +%s.%N >> "$BT_DIR/workload.epoch"
trace-cmd report --stat -i "$NAME.dat" > "$VMOUT/$NAME.tc-stat.txt" 2>&1 || true
rm -f "$HOG"/h*; umount "$HOG"
umount "$MNT"
cp "$NAME.dat" "$NAME.fio.json" "$VMOUT/"
cp workload.sh "$VMOUT/$NAME.workload.sh"
for f in meminfo-before meminfo-after vmstat-before vmstat-after hog reader; do cp "$f.txt" "$VMOUT/$NAME.$f.txt"; done
paste -d' ' -s workload.epoch > "$VMOUT/$NAME.workload-epoch.txt"
ls -l "$BT_DIR" "$VMOUT"
touch "$VMOUT/DONE"
