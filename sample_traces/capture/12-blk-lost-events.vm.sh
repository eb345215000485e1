#!/bin/bash
# Capture 12, the part that runs INSIDE the VM (started by 12-blk-lost-events.sh through
# shared/lab/vm-run).  Usage: 12-blk-lost-events.vm.sh VMOUT DISK_SIZE [RUNTIME]
#
# blktrace with deliberately tiny relay buffers (-b 1 -n 2: two 1 KiB sub-buffers per
# CPU, ~21 records each) during a burst of 4 KiB O_DIRECT random writes (libaio,
# iodepth 32, no rate limit): the kernel drops what the reader has not consumed, blktrace
# reports "dropped", and blkparse reports the holes in the per-CPU sequence numbers as
# "Skips".  If a run loses nothing the script tries again (at most 3 runs; the log says
# how many were needed).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/blk-lib.sh"
VMOUT=$1; DISK_SIZE=$2; RUNTIME=${3:-1}
NAME=blk-lost-events
vm_prepare "$VMOUT"
set -x
DEV=$(find_disk "$(size_bytes "$DISK_SIZE")")
tool_versions > "$VMOUT/$NAME.versions.txt"
queue_settings "$DEV" > "$VMOUT/$NAME.queue.txt"
cd "$BT_DIR"
for attempt in 1 2 3; do
  rm -f "$NAME".blktrace.* "$NAME.fio.json"
  bt_start "$NAME" "$DEV" -- -b 1 -n 2
  fio --name=burst --filename="$DEV" --direct=1 --ioengine=libaio --iodepth=32 --rw=randwrite \
    --bs=4k --size=64m --runtime="$RUNTIME" --time_based --randrepeat=0 \
    --output-format=json --output="$BT_DIR/$NAME.fio.json"
  sleep 0.5
  bt_stop
  if grep -Eq 'dropped [1-9]' "$BT_DIR/blktrace.out"; then break; fi
  blog "attempt $attempt lost nothing"
done
echo "attempts=$attempt" > "$VMOUT/$NAME.attempts.txt"
echo "$BT_CMD" > "$VMOUT/$NAME.blktrace-cmd.txt"
cp "$BT_DIR/blktrace.out" "$VMOUT/$NAME.blktrace.out.txt"
bt_derive "$NAME" "$NAME"
cp "$NAME".blktrace.* "$NAME.blkparse.txt" "$NAME.bin" "$NAME.btt.txt" "$NAME.fio.json" \
   "$NAME.blkparse-dump.out" "$NAME.btt.err" "$VMOUT/"
ls -l "$BT_DIR" "$VMOUT"
touch "$VMOUT/DONE"
