#!/bin/bash
# btrfs-full-fsync-fallback, inside the VM: the fix's fio job (writers, each fsyncing its
# own file) scaled down, with the page reclaim that triggers the fallback coming from a
# memory cgroup limit instead of 2-4x RAM of data.  btrfs on a 1 GiB null_blk disk
# with a 2 ms service time (lib.vm.sh); JOBS fio
# jobs, each on its own FILE_MB MiB file (over the 16 MiB above which page release drops
# extent maps), laid out and synced before tracing; then psync 4 KiB random writes with an
# fsync after every FSYNC_EVERY writes for RUNTIME s, from inside a cgroup v2 whose
# memory.max is MEMCG_MB: every new page charged pushes the group's older, clean file
# pages out (memcg reclaim -> btrfs_release_folio -> try_release_extent_mapping).  On the
# reverted kernel each extent map released that way sets the inode's full-sync flag and
# the next fsync logs every extent of the current transaction; on the fixed one it stays
# a fast fsync.  MEMCG_MB is 16: the run's page cache (file pages ~30 MiB at the end of
# every run) must exceed the limit, as the published benchmark's data exceeded RAM 2-4x.
# With a 40 MiB limit the group stayed under it in one run (memory.events max +0, no
# reclaim at all, so no fsync could take the fallback) and barely reached it in another
# (max +5).  fio's JSON (fsync latency percentiles) is the outside-the-trace measure;
# memory.stat and memory.events before and after are saved.
#   btrfs-full-fsync-fallback.vm.sh VMOUT DISK_SIZE NAME [RUNTIME=6] [JOBS=4] [FILE_MB=48] [MEMCG_MB=16] [FSYNC_EVERY=4] [RATE_IOPS=100]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; RUNTIME=${4:-6}; JOBS=${5:-4}; FILE_MB=${6:-48}; MEMCG_MB=${7:-16}
FSYNC_EVERY=${8:-4}; RATE_IOPS=${9:-100}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f "$DEV"; mount "$DEV" "$MNT"
CG=/sys/fs/cgroup
[ "$(stat -f -c %T $CG)" = cgroup2fs ] || mount -t cgroup2 none $CG
echo +memory > $CG/cgroup.subtree_control
mkdir -p $CG/kv; echo $((MEMCG_MB * 1048576)) > $CG/kv/memory.max
FIO_JOB=(--name=writers --directory="$MNT" --rw=randwrite --bs=4k --size=${FILE_MB}M --numjobs=$JOBS
         --ioengine=psync --fallocate=none --invalidate=0 --group_reporting=1)
fio "${FIO_JOB[@]}" --rw=write --bs=1M --end_fsync=1 --create_only=0 --runtime=600 > /dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
M=$BT_DIR/$NAME
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
echo \$\$ > $CG/kv/cgroup.procs
cat $CG/kv/memory.stat > $M.memcg-before.txt; cat $CG/kv/memory.events >> $M.memcg-before.txt
cat /proc/vmstat > $M.vmstat-before.txt
fio ${FIO_JOB[*]} --fsync=$FSYNC_EVERY --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \\
  --output-format=json --output=$M.fio.json
cat $CG/kv/memory.stat > $M.memcg-after.txt; cat $CG/kv/memory.events >> $M.memcg-after.txt
cat /proc/vmstat > $M.vmstat-after.txt
WL
chmod +x "$BT_DIR/workload.sh"
kv_record "$VMOUT" "$NAME" 'comm == "fio"' "$BT_DIR/workload.sh"
umount "$MNT"
