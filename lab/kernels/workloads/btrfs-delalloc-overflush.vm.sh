#!/bin/bash
# btrfs-delalloc-overflush, inside the VM: the published benchmark's untar under space pressure at VM
# scale.  btrfs on a 1 GiB null_blk disk with a 2 ms service time (lib.vm.sh), filled
# before tracing by a fallocated file until about FREE_MB MiB of data space is left (as
# sample_traces/capture/23-untar-full-btrfs.sh); then, traced, tar -xf of a
# source-tree-like tarball (FILES text files, made in the VM by
# sample_traces/capture/make-src-tarball.py before tracing) and sync.  Metadata
# reservations overcommit and space reclaim flushes delalloc (btrfs_flush_space): the
# fixed kernel asks writeback for a number of pages, the reverted one flushes whole
# inodes, counted as inodes.  date +%s.%N around tar and around sync are the
# outside-the-trace timings.  LARGE_PER_MILLE of the files are large (256 KiB - 8 MiB,
# make-src-tarball.py): with only kernel-sized files (at most 256 KiB, about what one
# reclaim item stands for) a whole-inode flush could never write more than a page-budget
# flush would, whatever the kernel.  FREE_MB leaves room for their data (3 per mille:
# 36 MB of file data in all, against 8.5 MB without them).
#   btrfs-delalloc-overflush.vm.sh VMOUT DISK_SIZE NAME [FILES=1500] [FREE_MB=90] [LARGE_PER_MILLE=3]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; FILES=${4:-1500}; FREE_MB=${5:-90}; LARGE_PER_MILLE=${6:-3}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.btrfs -q -f "$DEV"; mount "$DEV" "$MNT"
TARBALL=$BT_DIR/src.tar
"$CAPTURE_DIR/make-src-tarball.py" "$TARBALL" "$FILES" 1 "$LARGE_PER_MILLE"
free_b=$(btrfs filesystem usage -b "$MNT" | awk '/Free \(estimated\):/ {print $3; exit}')
fallocate -l $(( free_b - FREE_MB * 1048576 )) "$MNT/fill"
sync
M=$BT_DIR/$NAME
btrfs filesystem usage -b "$MNT" > "$M.fs-usage-before.txt"
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
t0=\$(date +%s.%N); tar -xf $TARBALL -C $MNT; t1=\$(date +%s.%N)
echo "\$t0 \$t1" > $M.tar-epoch.txt
t0=\$(date +%s.%N); sync; t1=\$(date +%s.%N)
echo "\$t0 \$t1" > $M.sync-epoch.txt
WL
chmod +x "$BT_DIR/workload.sh"
kv_record "$VMOUT" "$NAME" 'comm == "tar" || comm == "sync"' "$BT_DIR/workload.sh"
btrfs filesystem usage -b "$MNT" > "$VMOUT/$NAME.fs-usage-after.txt"
umount "$MNT"
