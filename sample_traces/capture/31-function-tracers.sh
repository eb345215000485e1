#!/bin/bash
# Captures 31: function-ext4-v7-zstd.dat, funcgraph-ext4-v7-zstd.dat (host wrapper).
# The function and function_graph tracers next to the writeback and block events,
# recorded in shared/lab/vm-run's VM (31-function-tracers.vm.sh); this wrapper copies
# the two captures into $OUTDIR and their record arguments and uname into
# $OUTDIR/measurements.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=function-tracers
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/31-function-tracers.vm.sh" "$VMOUT" 2G
cp "$VMOUT"/function-ext4-v7-zstd.dat "$VMOUT"/funcgraph-ext4-v7-zstd.dat "$OUTDIR/"
cp "$VMOUT"/measurements/* "$OUTDIR/measurements/"
ls -l "$OUTDIR"/function-ext4-v7-zstd.dat "$OUTDIR"/funcgraph-ext4-v7-zstd.dat >&2
