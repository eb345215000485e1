#!/bin/bash
# Capture 36, the part that runs INSIDE the VM (started by 36-fsync-fua-btrfs.sh through
# shared/lab/vm-run).  Usage: 36-fsync-fua-btrfs.vm.sh VMOUT
#
# btrfs on a memory-backed null_blk device with a volatile write cache and FUA
# (null_blk memory_backed=1 cache_size=64: /sys/block/nullb0/queue/fua = 1, write_cache =
# "write back"; every request completes 200 us after it is issued, irqmode=2), so the
# superblock write that ends each btrfs log commit goes out as a FUA write (RWBS WFSM)
# instead of a write followed by a cache flush (virtio and loop devices have no FUA).
# Workload: fio, 2 jobs of 4 KiB buffered random writes over 16 MiB files, fsync every
# 8 writes, 6 s.  Recorded the way users record: the writeback and block subsystems,
# btrfs_sync_file and the fsync syscalls, unfiltered.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1
NAME=fsync-fua-btrfs-v7-zstd
vm_prepare "$VMOUT"
set -x
tool_versions > "$VMOUT/$NAME.versions.txt"
uname -a > "$VMOUT/$NAME.uname.txt"
modprobe null_blk nr_devices=1 queue_mode=2 memory_backed=1 gb=1 cache_size=64 irqmode=2 completion_nsec=200000
queue_settings /dev/nullb0 > "$VMOUT/$NAME.queue.txt"
echo "fua=$(cat /sys/block/nullb0/queue/fua)" >> "$VMOUT/$NAME.queue.txt"
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f /dev/nullb0; mount /dev/nullb0 "$MNT"
sync
TC_ARGS=(-b 8192 -e writeback -e block -e btrfs:btrfs_sync_file -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync)
printf '%s\n' "${TC_ARGS[@]}" > "$VMOUT/$NAME.record-args.txt"
cd "$BT_DIR"
# kallsyms hidden (tc-small), as for the host captures: keeps the file small
"$BLK_CAPTURE_DIR/tc-small" record -q "${TC_ARGS[@]}" -o "$BT_DIR/$NAME.dat" \
  fio --name=w --directory="$MNT" --rw=randwrite --bs=4k --size=16m --fsync=8 --numjobs=2 --time_based --runtime=6 \
      --output-format=json --output="$BT_DIR/$NAME.fio.json"
trace-cmd report --stat -i "$NAME.dat" > "$VMOUT/$NAME.tc-stat.txt" 2>&1 || true
umount "$MNT"
cp "$NAME.dat" "$NAME.fio.json" "$VMOUT/"
touch "$VMOUT/DONE"
