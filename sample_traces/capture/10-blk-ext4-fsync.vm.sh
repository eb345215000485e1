#!/bin/bash
# Capture 10, the part that runs INSIDE the VM (started by 10-blk-ext4-fsync.sh through
# shared/lab/vm-run).  Usage: 10-blk-ext4-fsync.vm.sh VMOUT DISK_SIZE [RUNTIME RATE_IOPS BG_MB]
#
# One incident recorded twice at the same time: blktrace on the scratch disk AND
# trace-cmd record (writeback, block, fsync/sync syscalls) of the same run.
# ext4 on the whole scratch disk; a buffered background stream (dd, no fsync) with
# vm.dirty_background_bytes lowered to 16 MiB so the flusher writes during the run,
# next to fio doing 4k random buffered writes with an fsync every 8 writes; then sync.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2
RUNTIME=${3:-3}; RATE_IOPS=${4:-500}; BG_MB=${5:-32}
NAME=blk-ext4-fsync
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")")
tool_versions > "$VMOUT/$NAME.versions.txt"
queue_settings "$DEV" > "$VMOUT/$NAME.queue.txt"

MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
echo $((16 << 20)) > /proc/sys/vm/dirty_background_bytes
echo $((64 << 20)) > /proc/sys/vm/dirty_bytes
sysctl_dirty > "$VMOUT/$NAME.sysctl.txt"
# fio lays its file out before the traced run, so the traced run is overwrite + fsync
fio --name=prep --filename="$MNT/fio.dat" --rw=write --bs=1M --size=8M --end_fsync=1 > /dev/null
sync; echo 3 > /proc/sys/vm/drop_caches

cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
# background buffered stream, no fsync: the flusher (background threshold 16 MiB) writes it
date +%s.%N > $BT_DIR/dd.epoch
dd if=/dev/zero of=$MNT/stream.dat bs=64k count=$((BG_MB * 16)) status=none &
DD=\$!
fio --name=fsyncw --filename=$MNT/fio.dat --ioengine=psync --rw=randwrite --bs=4k --size=8M \\
  --fsync=8 --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \\
  --output-format=json --output=$BT_DIR/$NAME.fio.json
wait \$DD
date +%s.%N >> $BT_DIR/dd.epoch
date +%s.%N > $BT_DIR/sync.epoch
{ time -p sync ; } 2> $BT_DIR/sync.time
date +%s.%N >> $BT_DIR/sync.epoch
sleep 0.5
WL
chmod +x "$BT_DIR/workload.sh"

TC_ARGS=(-C mono -b 20000 -e writeback -e block
         -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync
         -e syscalls:sys_enter_sync -e syscalls:sys_exit_sync)
printf '%s\n' "${TC_ARGS[@]}" > "$VMOUT/$NAME.record-args.txt"

cd "$BT_DIR"
bt_start "$NAME" "$DEV"
echo "$BT_CMD" > "$VMOUT/$NAME.blktrace-cmd.txt"
date +%s.%N > "$BT_DIR/workload.epoch"
trace-cmd record -q "${TC_ARGS[@]}" -o "$BT_DIR/$NAME.dat" "$BT_DIR/workload.sh"
date +%s.%N >> "$BT_DIR/workload.epoch"
bt_stop
cp "$BT_DIR/blktrace.out" "$VMOUT/$NAME.blktrace.out.txt"
trace-cmd report --stat -i "$NAME.dat" > "$VMOUT/$NAME.tc-stat.txt" 2>&1 || true

bt_derive "$NAME" "$NAME"
cat /proc/uptime > "$VMOUT/$NAME.uptime.txt"
umount "$MNT"
cp "$NAME".blktrace.* "$NAME.dat" "$NAME.blkparse.txt" "$NAME.bin" "$NAME.btt.txt" "$NAME.fio.json" \
   "$NAME.blkparse-dump.out" "$NAME.btt.err" "$VMOUT/"
cp workload.sh "$VMOUT/$NAME.workload.sh"
paste -d' ' -s dd.epoch > "$VMOUT/$NAME.dd-epoch.txt"
paste -d' ' -s sync.epoch > "$VMOUT/$NAME.sync-epoch.txt"
paste -d' ' -s workload.epoch > "$VMOUT/$NAME.workload-epoch.txt"
awk '/^real/ {print $2}' sync.time > "$VMOUT/$NAME.sync-time.txt"
ls -l "$BT_DIR" "$VMOUT"
touch "$VMOUT/DONE"
