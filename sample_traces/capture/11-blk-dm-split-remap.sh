#!/bin/bash
# Capture 11: blk-dm-split-remap.* -- remaps, splits, bfq messages, merges, cgroup ids
# (host wrapper; the in-VM part is 11-blk-dm-split-remap.vm.sh, run through
# shared/lab/vm-run on a 1 GiB scratch disk).  No paired trace.dat.
# BLK_CGROUP=1 NAME=blk-dm-cgroup: the same with cgroup ids in the records (capture 13).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=${NAME:-blk-dm-split-remap}
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/11-blk-dm-split-remap.vm.sh" "$VMOUT" 1G 1G "${BLK_CGROUP:-0}" "$NAME"
cp "$VMOUT/$NAME".*.blktrace.[0-9]* "$VMOUT/$NAME.blkparse.txt" "$VMOUT/$NAME.btt.txt" "$OUTDIR/"
[ "${KEEP_BIN:-1}" = 1 ] && cp "$VMOUT/$NAME.bin" "$OUTDIR/"
for f in versions.txt dmsetup-version.txt layout.txt queue.txt cgroup.txt blktrace-cmd.txt \
         blktrace.out.txt workload.sh workload-epoch.txt; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
