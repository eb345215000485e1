#!/bin/bash
# Capture 11, the part that runs INSIDE the VM (started by 11-blk-dm-split-remap.sh
# through shared/lab/vm-run, and by 13-blk-dm-cgroup.sh with BLK_CGROUP=1).
# Usage: 11-blk-dm-split-remap.vm.sh VMOUT DISK_SIZE [BLK_CGROUP 0|1] [NAME]
#
# The less common blktrace actions, for real:
#  - REMAP (A): a device-mapper linear target on a PARTITION of the scratch disk
#    (/dev/vda1 from 1 MiB; dm-0 = vda1 from sector 2048), so one bio is remapped twice
#    on its way down: dm-0 -> vda1 (A, from 253,0) and vda1 -> vda (A, from 254,1);
#  - SPLIT (X): vda's max_sectors_kb lowered to 16, then 1 MiB O_DIRECT reads and writes;
#  - MESSAGE (m): the bfq scheduler on vda (bfq logs through blk_add_trace_msg);
#  - back merges (M): buffered sequential 4 KiB writes to the block device (one 4 KiB
#    bio per page from the block device's writepage) and front merges (F), if any, from
#    random 4 KiB O_DIRECT writes over a 64 KiB range submitted 16 at a time (libaio);
#  - plugs/unplugs (P, U, UT) come with all of it;
#  - the workload runs in a cgroup-v2 child (io controller enabled); with BLK_CGROUP=1
#    options/blk_cgroup is set to 1 before blktrace starts, so the records carry cgroup
#    ids (__BLK_TA_CGROUP in the action, 8-byte id at the start of the payload).  Debian
#    12's blkparse 1.2.0 does not know that flag and silently skips those records, which
#    is why capture 11 runs with BLK_CGROUP=0 and capture 13 with BLK_CGROUP=1.
# blktrace traces dm-0 and vda in one process (default per-device file names, renamed
# NAME.dm-0.blktrace.N / NAME.vda.blktrace.N afterwards).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2; BLK_CGROUP=${3:-0}
NAME=${4:-blk-dm-split-remap}
MAX_SECTORS_KB=${MAX_SECTORS_KB:-16}
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")"); B=${DEV#/dev/}
tool_versions > "$VMOUT/$NAME.versions.txt"
modprobe bfq
modprobe dm-mod
dmsetup version > "$VMOUT/$NAME.dmsetup-version.txt"

# partition 1 from sector 2048 to the end (an MBR written by hand: the host has no
# sfdisk/parted), then dm linear over it, skipping its first MiB
le32() { local n=$1; printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)); }
SECTORS=$(blockdev --getsz "$DEV")
printf "\x00\xfe\xff\xff\x83\xfe\xff\xff$(le32 2048)$(le32 $((SECTORS - 2048)))" \
  | dd of="$DEV" bs=1 seek=446 conv=notrunc status=none
printf '\x55\xaa' | dd of="$DEV" bs=1 seek=510 conv=notrunc status=none
sync; partx -a "$DEV" 2>/dev/null || blockdev --rereadpt "$DEV"
for i in $(seq 50); do [ -b "${DEV}1" ] && break; sleep 0.1; done
echo "$MAX_SECTORS_KB" > "/sys/block/$B/queue/max_sectors_kb"
echo bfq > "/sys/block/$B/queue/scheduler"
P1=$(blockdev --getsz "${DEV}1")
TABLE="0 $((P1 - 2048)) linear ${DEV}1 2048"
dmsetup create wa-lin --table "$TABLE"
DM=$(readlink -f /dev/mapper/wa-lin); DMB=${DM#/dev/}
{ echo "MBR on $DEV: partition 1 type 0x83 start 2048 sectors $((SECTORS - 2048))"; partx -s "$DEV"; echo "dmsetup table wa-lin: $(dmsetup table wa-lin)";
  echo "dm device: $DM ($(cat /sys/block/$DMB/dev))"; echo "partition: ${DEV}1 ($(cat /sys/class/block/${B}1/dev)) start $(cat /sys/class/block/${B}1/start)"; } \
  > "$VMOUT/$NAME.layout.txt"
{ queue_settings "$DEV"; echo; queue_settings "$DM"; } > "$VMOUT/$NAME.queue.txt"

# cgroup ids in the records: the blk tracer's blk_cgroup option (global, also used by
# the relay interface blktrace reads), and a cgroup-v2 child for the workload
echo "$BLK_CGROUP" > /sys/kernel/tracing/options/blk_cgroup
echo "options/blk_cgroup=$(cat /sys/kernel/tracing/options/blk_cgroup)" > "$VMOUT/$NAME.cgroup.txt"
echo +io > /sys/fs/cgroup/cgroup.subtree_control
CG=/sys/fs/cgroup/wa-blk; mkdir -p "$CG"
{ echo "cgroup.subtree_control(root)=$(cat /sys/fs/cgroup/cgroup.subtree_control)";
  echo "workload cgroup: $CG, cgroup id (inode) $(stat -c %i "$CG")";
  echo "root cgroup id (inode) $(stat -c %i /sys/fs/cgroup)"; } >> "$VMOUT/$NAME.cgroup.txt"

cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
set -e
echo \$\$ > $CG/cgroup.procs
# 1. large O_DIRECT writes and reads through dm-0: 1 MiB bios split to ${MAX_SECTORS_KB} KiB on $B
dd if=/dev/zero of=$DM oflag=direct bs=1M count=1 status=none
dd if=$DM of=/dev/null iflag=direct bs=1M count=1 status=none
# 2. buffered sequential writes (page cache of the block device), back merges
dd if=/dev/zero of=$DM bs=4k count=256 seek=4096 conv=fsync status=none
# 3. random 4 KiB O_DIRECT writes over 64 KiB, 16 per io_submit (plug), front/back merges
fio --name=merge --filename=$DM --direct=1 --ioengine=libaio --iodepth=16 --iodepth_batch_submit=16 \\
  --iodepth_batch_complete_min=16 --rw=randwrite --bs=4k --size=64k --offset=8m --loops=4 \\
  --randrepeat=0 --output-format=terse > /dev/null
WL
chmod +x "$BT_DIR/workload.sh"

cd "$BT_DIR"
bt_start "" "$DM" "$DEV"
echo "$BT_CMD" > "$VMOUT/$NAME.blktrace-cmd.txt"
date +%s.%N > workload.epoch
"$BT_DIR/workload.sh"
date +%s.%N >> workload.epoch
sleep 0.5
bt_stop
cp "$BT_DIR/blktrace.out" "$VMOUT/$NAME.blktrace.out.txt"
for f in "$DMB".blktrace.* "$B".blktrace.*; do mv "$f" "$NAME.$f"; done
bt_derive "$NAME" "$NAME.$DMB" "$NAME.$B"
echo "workload cgroup after: $(cat $CG/cgroup.procs | wc -l) procs" >> "$VMOUT/$NAME.cgroup.txt"
rmdir "$CG" || true
dmsetup remove wa-lin
cp "$NAME".*.blktrace.* "$NAME.blkparse.txt" "$NAME.bin" "$NAME.btt.txt" \
   "$NAME.blkparse-dump.out" "$NAME.btt.err" "$VMOUT/"
cp workload.sh "$VMOUT/$NAME.workload.sh"
paste -d' ' -s workload.epoch > "$VMOUT/$NAME.workload-epoch.txt"
ls -l "$BT_DIR" "$VMOUT"
touch "$VMOUT/DONE"
