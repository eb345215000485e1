#!/bin/bash
# Capture 14, the part that runs INSIDE the VM (started by 14-blk-stdin-stream.sh through
# shared/lab/vm-run).  Usage: 14-blk-stdin-stream.vm.sh VMOUT DISK_SIZE [RUNTIME]
#
# `blktrace -d DEV -o -` redirected to a file during fio 4k random reads and writes on
# the raw scratch disk (libaio, iodepth 8, 1500 IOPS cap): the byte stream a pipe
# would carry.  blkparse reads it back the way a pipe is read (`blkparse -i -`).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2; RUNTIME=${3:-2}
NAME=blk-stdin-stream
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")")
tool_versions > "$VMOUT/$NAME.versions.txt"
queue_settings "$DEV" > "$VMOUT/$NAME.queue.txt"
cd "$BT_DIR"
BT_CMD="blktrace -d $DEV -o -"
echo "$BT_CMD > $NAME.stream" > "$VMOUT/$NAME.blktrace-cmd.txt"
blktrace -d "$DEV" -o - > "$NAME.stream" 2> "$NAME.blktrace.err" &
BT_PID=$!
for i in $(seq 100); do [ -e "/sys/kernel/debug/block/$(basename "$DEV")/trace0" ] && break; sleep 0.1; done
sleep 1
fio --name=mixed --filename="$DEV" --direct=1 --ioengine=libaio --iodepth=8 --rw=randrw \
  --bs=4k --size=256m --rate_iops=1500 --runtime="$RUNTIME" --time_based --randrepeat=0 \
  --output-format=json --output="$BT_DIR/$NAME.fio.json"
sleep 0.5
kill -INT "$BT_PID"; wait "$BT_PID" || true
blkparse -i - < "$NAME.stream" > "$NAME.blkparse.txt"
cp "$NAME.blktrace.err" "$VMOUT/$NAME.blktrace.err.txt"
cp "$NAME.stream" "$NAME.blkparse.txt" "$NAME.fio.json" "$VMOUT/"
ls -l "$BT_DIR" "$VMOUT"
touch "$VMOUT/DONE"
