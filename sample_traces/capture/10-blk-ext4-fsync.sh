#!/bin/bash
# Capture 10: blk-ext4-fsync.* -- blktrace AND trace-cmd of the same run (host wrapper).
# The host kernel refuses blktrace (lockdown), so the capture runs in the throw-away VM
# of shared/lab/vm-run (Debian's 6.1 kernel, 2 vCPUs, 2 GiB, emulated, 2 GiB scratch
# virtio disk); the in-VM part is 10-blk-ext4-fsync.vm.sh.  This wrapper copies the
# samples into $OUTDIR and the outside-the-trace measurements into $OUTDIR/measurements.
#   RUNTIME (s, default 3), RATE_IOPS (fio cap, default 500), BG_MB (dd stream MiB, default 32)
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=blk-ext4-fsync
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/10-blk-ext4-fsync.vm.sh" "$VMOUT" 2G 2G \
  "${RUNTIME:-3}" "${RATE_IOPS:-500}" "${BG_MB:-32}"
cp "$VMOUT/$NAME".blktrace.[0-9]* "$VMOUT/$NAME.dat" "$VMOUT/$NAME.blkparse.txt" \
   "$VMOUT/$NAME.btt.txt" "$OUTDIR/"
[ "${KEEP_BIN:-1}" = 1 ] && cp "$VMOUT/$NAME.bin" "$OUTDIR/"
for f in versions.txt queue.txt sysctl.txt record-args.txt blktrace-cmd.txt blktrace.out.txt \
         tc-stat.txt fio.json workload.sh dd-epoch.txt sync-epoch.txt sync-time.txt \
         workload-epoch.txt; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
