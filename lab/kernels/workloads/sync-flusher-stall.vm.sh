#!/bin/bash
# sync-flusher-stall, inside the VM: the published benchmark's "sync(1) while fs_mark keeps creating
# small files" at VM scale.  xfs on a 1 GiB null_blk disk with a 2 ms service time
# (lib.vm.sh); smallfiles.py writes FILES files of 4 KiB (no fsync: FILES dirty inodes, far
# under the background threshold), then a second writer keeps creating 4 KiB files as
# fast as it can (PACE_MS 0) while sync(1) runs; date +%s.%N around sync is the
# outside-the-trace timing.  sync(2) first queues an asynchronous pass that submits every
# inode dirty at that moment, then sync_inodes_sb's WB_SYNC_ALL pass writes what was
# dirtied meanwhile: the second writer's files.  On the fixed kernel that pass only
# submits (sync's caller waits for all of it at once in wait_sb_inodes); on the reverted
# one the flusher waits for each inode's I/O before the next (filemap_fdatawait in
# __writeback_single_inode), one 2 ms device round trip per inode.
#   sync-flusher-stall.vm.sh VMOUT DISK_SIZE NAME [FILES=4000] [PACE_MS=0]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; FILES=${4:-4000}; PACE_MS=${5:-0}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.xfs -q -f "$DEV"; mount "$DEV" "$MNT"; sync
M=$BT_DIR/$NAME
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
$LAB_WL_DIR/smallfiles.py $MNT/a f $FILES > $M.writer1.txt
$LAB_WL_DIR/smallfiles.py $MNT/b g 100000 4096 $PACE_MS $BT_DIR/stop > $M.writer2.txt &
W=\$!
sleep 0.5
grep -E '^(Dirty|Writeback):' /proc/meminfo > $M.meminfo-at-sync.txt
t0=\$(date +%s.%N); sync; t1=\$(date +%s.%N)
echo "\$t0 \$t1" > $M.sync-epoch.txt
sleep 0.5
touch $BT_DIR/stop; wait \$W
WL
chmod +x "$BT_DIR/workload.sh"
kv_record "$VMOUT" "$NAME" 'comm == "sync" || comm == "smallfiles.py"' "$BT_DIR/workload.sh"
umount "$MNT"
