#!/bin/bash
# Capture 36: fsync-fua-btrfs-v7-zstd.dat -- fsync-heavy fio on btrfs over a device with
# FUA (host wrapper).  The host's loop devices have no FUA, and its kernel loads no
# modules, so the capture runs in the VM of shared/lab/vm-run (Debian's 6.1 kernel,
# emulated) on a null_blk device; the in-VM part is 36-fsync-fua-btrfs.vm.sh.  fio's own
# fsync latencies (measurements/NAME.fio.json) are the measurement from outside the trace.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=fsync-fua-btrfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'cp "$VMOUT/log.txt" "/tmp/wa-capture/$NAME.vm-log.txt" 2>/dev/null; rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/36-fsync-fua-btrfs.vm.sh" "$VMOUT" 1G
cp "$VMOUT/$NAME.dat" "$OUTDIR/"
for f in versions.txt uname.txt queue.txt record-args.txt tc-stat.txt fio.json; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
