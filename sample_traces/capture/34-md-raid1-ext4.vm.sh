#!/bin/bash
# Capture 34, the part that runs INSIDE the VM (started by 34-md-raid1-ext4.sh through
# shared/lab/vm-run).  Usage: 34-md-raid1-ext4.vm.sh VMOUT DISK_SIZE
#
# ext4 on an md RAID1 (/dev/md0, 9,0) of two loop devices (7,0 and 7,1, direct I/O), whose
# image files sit on an ext4 on the scratch disk (/dev/vda, 254,0): every write of the
# filesystem shows as a bio queued on 9,0, a request on 7,0 and again on 7,1 (one per
# copy), and both again on 254,0.  md has no request queue, so 9,0 has no block_rq_* events.
# No write-intent bitmap and --assume-clean: no resync IO during the capture.
# Recorded the way users record: the whole writeback subsystem, the block requests and
# queued bios, the sync/fsync/fdatasync syscalls, unfiltered.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2
NAME=md-raid1-ext4-v7-zstd
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")")
tool_versions > "$VMOUT/$NAME.versions.txt"
uname -a > "$VMOUT/$NAME.uname.txt"
modprobe loop; modprobe md_mod; modprobe raid1
BACK=/tmp/wa-back; MNT=/tmp/wa-mnt; mkdir -p "$BACK" "$MNT"
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$BACK"
truncate -s 400M "$BACK/m0.img" "$BACK/m1.img"
L0=$(losetup -f --show --direct-io=on "$BACK/m0.img"); L1=$(losetup -f --show --direct-io=on "$BACK/m1.img")
mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 --assume-clean --bitmap=none "$L0" "$L1"
{ cat /proc/mdstat; echo "md0 $(cat /sys/block/md0/dev) members $L0 $(cat /sys/block/${L0#/dev/}/dev) $L1 $(cat /sys/block/${L1#/dev/}/dev) backing $DEV $(cat /sys/block/${DEV#/dev/}/dev)"; } > "$VMOUT/$NAME.mdstat.txt"
mkfs.ext4 -q -F /dev/md0; mount /dev/md0 "$MNT"
sync
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
dd if=/dev/zero of=$MNT/a bs=1M count=48 status=none
date +%s.%N > $BT_DIR/sync.epoch; sync; date +%s.%N >> $BT_DIR/sync.epoch
dd if=/dev/zero of=$MNT/b bs=64k count=256 conv=fsync status=none
WL
chmod +x "$BT_DIR/workload.sh"
TC_ARGS=(-b 20000 -e writeback -e block:block_rq_insert -e block:block_rq_issue -e block:block_rq_complete
         -e block:block_bio_queue -e syscalls:sys_enter_sync -e syscalls:sys_exit_sync
         -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync)
printf '%s\n' "${TC_ARGS[@]}" > "$VMOUT/$NAME.record-args.txt"
cd "$BT_DIR"
# kallsyms hidden (tc-small), as for the host captures: keeps the file small
"$BLK_CAPTURE_DIR/tc-small" record -q "${TC_ARGS[@]}" -o "$BT_DIR/$NAME.dat" "$BT_DIR/workload.sh"
paste -d' ' -s sync.epoch > "$VMOUT/$NAME.sync-epoch.txt"
trace-cmd report --stat -i "$NAME.dat" > "$VMOUT/$NAME.tc-stat.txt" 2>&1 || true
umount "$MNT"; mdadm --stop /dev/md0; losetup -d "$L0" "$L1"; umount "$BACK"
cp "$NAME.dat" "$VMOUT/"
touch "$VMOUT/DONE"
