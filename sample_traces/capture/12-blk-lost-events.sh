#!/bin/bash
# Capture 12: blk-lost-events.* -- a blktrace capture that LOST events on purpose
# (host wrapper; the in-VM part is 12-blk-lost-events.vm.sh, run through
# shared/lab/vm-run on a 1 GiB scratch disk).  RUNTIME (s, default 1).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=blk-lost-events
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/12-blk-lost-events.vm.sh" "$VMOUT" 1G 1G "${RUNTIME:-1}"
cp "$VMOUT/$NAME".blktrace.[0-9]* "$VMOUT/$NAME.blkparse.txt" "$VMOUT/$NAME.btt.txt" "$OUTDIR/"
[ "${KEEP_BIN:-1}" = 1 ] && cp "$VMOUT/$NAME.bin" "$OUTDIR/"
for f in versions.txt queue.txt attempts.txt blktrace-cmd.txt blktrace.out.txt fio.json; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
