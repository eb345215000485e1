#!/bin/bash
# btrfs-snapshot-livelock, inside the VM: a snapshot taken while a writer dirties the
# subvolume, the published benchmark's first fio job (sequential, libaio iodepth 32, bs 4k) at VM scale.
# btrfs on a 1 GiB null_blk disk with a 2 ms service time (lib.vm.sh) with a subvolume;
# fio writes it at RATE; after SNAP_AFTER s a read-only snapshot by
# sample_traces/capture/snapshot-ioctl (BTRFS_IOC_SNAP_CREATE_V2, timed with
# CLOCK_MONOTONIC around the ioctl: NAME.snapshot-ioctl.json); fio goes on for AFTER s.
# The fixed kernel's snapshot flush writes only the pages dirty when it began (tagged
# writepages); the reverted one also writes what fio dirties meanwhile.
# At this scale the flush (~35 MB/s on the emulated CPU) overtakes an 8 MB/s writer, so
# the reverted kernel's snapshot writes more and takes longer but does not livelock.
# Also tried, and worse: the published benchmark's 4 random writers (their threads took seconds to start
# on the emulated CPU: under 1 MB was dirty when the snapshot began) and an uncapped
# sequential writer (it dirtied almost nothing while the snapshot ran on either kernel:
# fio preallocated its 1 GiB file on the 1 GiB disk, and a buffered write into
# preallocated space that cannot reserve data space takes the NOCOW path, whose
# btrfs_check_nocow_lock() fails while the snapshot holds root->snapshot_lock).  Then an
# uncapped writer without preallocation on a disk slowed to ~16 MB/s (one request in
# flight, 8 ms each): fio dirtied ~40 MB/s, and on the reverted kernel the untagged
# flush locked and submitted all 160 MB dirty at the snapshot within its first second
# (the disk only lengthened the wait for ordered extents after it: 13.6 s): the flush
# loop runs at ~4x the emulated writer's rate whatever the disk's speed, so no writer
# here can keep it going.
#   btrfs-snapshot-livelock.vm.sh VMOUT DISK_SIZE NAME [RATE=8m] [SNAP_AFTER=4] [AFTER=1]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; RATE=${4:-8m}; SNAP_AFTER=${5:-4}; AFTER=${6:-1}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f "$DEV"; mount "$DEV" "$MNT"
btrfs subvolume create "$MNT/sub" > /dev/null; sync
M=$BT_DIR/$NAME
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
fio --name=job1 --filename=$MNT/sub/testfile --ioengine=libaio --iodepth=32 --bs=4k --rw=write \\
  --size=1G --direct=0 --thread=1 --rate=$RATE --time_based --runtime=120 \\
  --output-format=json --output=$M.fio.json &
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
