#!/bin/bash
# btrfs-snapshot-livelock, inside the VM: a snapshot taken while writers dirty the
# subvolume, the seed's second fio job (randwrite, numjobs 4) at VM scale.  btrfs on a
# 1 GiB null_blk disk with a 2 ms service time (lib.vm.sh) with a subvolume holding a
# 128 MiB file laid out and synced before tracing; 4 fio jobs rewrite it at random with
# buffered 4 KiB writes (libaio iodepth 32), RATE each; after SNAP_AFTER s a read-only
# snapshot by sample_traces/capture/snapshot-ioctl (BTRFS_IOC_SNAP_CREATE_V2, timed with
# CLOCK_MONOTONIC around the ioctl: NAME.snapshot-ioctl.json); fio goes on for AFTER s.
# The fixed kernel's snapshot flush writes only the pages dirty when it began (tagged
# writepages); the reverted one walks the file's dirty pages in index order and also
# writes those the writers dirty ahead of it meanwhile.  (A sequential writer dirties
# only behind the end of the file, which the flush reaches and stops at: tried first,
# it wrote 3.4% late pages on the reverted kernel against 2.0% on stock.)
#   btrfs-snapshot-livelock.vm.sh VMOUT DISK_SIZE NAME [RATE=2m] [SNAP_AFTER=4] [AFTER=1]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; RATE=${4:-2m}; SNAP_AFTER=${5:-4}; AFTER=${6:-1}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f "$DEV"; mount "$DEV" "$MNT"
btrfs subvolume create "$MNT/sub" > /dev/null
fio --name=prep --filename="$MNT/sub/testfile" --rw=write --bs=1M --size=128M --end_fsync=1 > /dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
M=$BT_DIR/$NAME
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
fio --name=job1 --filename=$MNT/sub/testfile --ioengine=libaio --iodepth=32 --bs=4k --rw=randwrite \\
  --numjobs=4 --size=128M --randrepeat=0 --invalidate=0 --direct=0 --thread=1 --rate=$RATE --time_based \\
  --runtime=120 --group_reporting --output-format=json --output=$M.fio.json &
FIO=\$!
sleep $SNAP_AFTER
grep -E '^(Dirty|Writeback):' /proc/meminfo > $M.meminfo-at-snapshot.txt
t0=\$(date +%s.%N)
$CAPTURE_DIR/snapshot-ioctl $MNT/sub $MNT/snap $M.snapshot-ioctl.json
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > $M.snapshot-epoch.txt
sleep $AFTER
kill -INT \$FIO; wait \$FIO || true
WL
chmod +x "$BT_DIR/workload.sh"
kv_record "$VMOUT" "$NAME" 'comm == "fio" || comm == "snapshot-ioctl"' "$BT_DIR/workload.sh"
umount "$MNT"
