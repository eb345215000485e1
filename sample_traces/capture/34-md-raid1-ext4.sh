#!/bin/bash
# Capture 34: md-raid1-ext4-v7-zstd.dat -- ext4 on an md RAID1 of two loop devices (host
# wrapper).  The host kernel has no md driver, so the capture runs in the VM of
# shared/lab/vm-run (Debian's 6.1 kernel, emulated); the in-VM part is
# 34-md-raid1-ext4.vm.sh.  The workload: dd of 48 MiB (1 MiB blocks, buffered), sync(1)
# timed from outside the trace (date +%s.%N around it, measurements/NAME.sync-epoch.txt),
# then 16 MiB in 64 KiB blocks with fsync.  It shows a filesystem whose device (md0, 9,0)
# has no requests of its own, whose writes reach two devices under it once per copy.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=md-raid1-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'cp "$VMOUT/log.txt" "/tmp/wa-capture/$NAME.vm-log.txt" 2>/dev/null; rm -rf "$WORK"' EXIT
command -v mdadm >/dev/null || apt-get install -y -q mdadm >/dev/null
vm_capture "$NAME" "$HERE/34-md-raid1-ext4.vm.sh" "$VMOUT" 2G 2G
cp "$VMOUT/$NAME.dat" "$OUTDIR/"
for f in versions.txt uname.txt mdstat.txt record-args.txt tc-stat.txt sync-epoch.txt; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
