#!/bin/bash
# Capture 14: blk-stdin-stream.* -- blktrace writing to stdout (`blktrace -o -`), the
# stream `blktrace -o - | advisor ingest -` reads: records of both CPUs interleaved
# as blktrace drains its relay buffers, no per-CPU files (host wrapper; the in-VM
# part is 14-blk-stdin-stream.vm.sh, run through shared/lab/vm-run on a 1 GiB disk).
# RUNTIME (s, default 2).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=blk-stdin-stream
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/14-blk-stdin-stream.vm.sh" "$VMOUT" 1G 1G "${RUNTIME:-2}"
cp "$VMOUT/$NAME.stream" "$VMOUT/$NAME.blkparse.txt" "$OUTDIR/"
for f in versions.txt queue.txt blktrace-cmd.txt blktrace.err.txt fio.json; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
