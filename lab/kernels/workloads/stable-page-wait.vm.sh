#!/bin/bash
# stable-page-wait, inside the VM: writers rewriting pages that are under writeback.
# ext4 on a 1 GiB null_blk disk
# with a 2 ms service time (lib.vm.sh), whose
# queue does not ask for stable pages (queue/stable_writes=0, saved in NAME.stable_writes.txt).  fio rewrites a 256 KiB file
# (64 pages) sequentially, over and over, with buffered 4 KiB pwrites, and starts
# writeback of what it wrote every 64 writes with sync_file_range(SYNC_FILE_RANGE_WRITE)
# (as sample_traces/capture/06-stable-pages-ext4-v7-zstd.sh).  The next pass writes to
# folios still under writeback: the fixed kernel lets it (folio_wait_stable() waits only
# if the mapping needs stable writes), the reverted one waits for each such folio's
# device write (writeback:folio_wait_writeback inside pwrite64).  fio's JSON (write
# latency percentiles) is the outside-the-trace measure.
#   stable-page-wait.vm.sh VMOUT DISK_SIZE NAME [RUNTIME=4] [RATE_IOPS=2000]
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.vm.sh"
VMOUT=$1; DISK_SIZE=$2; NAME=$3; RUNTIME=${4:-4}; RATE_IOPS=${5:-2000}
vm_prepare "$VMOUT"
set -x
DEV=$(kv_slow_disk 1024 "${SERVICE_MS:-2}" "$NAME")
cat "/sys/block/$(basename "$(readlink -f "$DEV")")/queue/stable_writes" > "$BT_DIR/$NAME.stable_writes.txt"
MNT=/tmp/wa-mnt; mkdir -p "$MNT"
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
fio --name=prep --filename="$MNT/rewrite.dat" --rw=write --bs=256k --size=256k --end_fsync=1 > /dev/null
sync; echo 3 > /proc/sys/vm/drop_caches
cat > "$BT_DIR/workload.sh" <<WL
#!/bin/bash
fio --name=rewrite --filename=$MNT/rewrite.dat --ioengine=psync --rw=write --bs=4k --size=256k \\
  --sync_file_range=write:64 --rate_iops=$RATE_IOPS --runtime=$RUNTIME --time_based --randrepeat=0 \\
  --output-format=json --output=$BT_DIR/$NAME.fio.json
WL
chmod +x "$BT_DIR/workload.sh"
kv_record "$VMOUT" "$NAME" 'comm == "fio"' "$BT_DIR/workload.sh"
umount "$MNT"
