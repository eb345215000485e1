#!/bin/bash
# Runs inside shared/lab/vm-run (Debian's 6.1 kernel, 2 vCPUs, 2 GiB scratch disk /dev/vda):
#   shared/lab/vm-run sample_traces/capture/25-blk-clock-global.vm.sh OUTDIR
# blktrace and trace-cmd of ONE run, trace-cmd WITHOUT -C: the kernel's default trace
# clock (`global` on this kernel, measurements/blk-clock-global.trace_clock.txt), not the
# monotonic clock blktrace stamps. The capture was made with the names clk-local.* and
# renamed to blk-clock-global.* when copied into sample_traces; the derived files
# (.blkparse.txt, .bin, .btt.txt) were made on the host with the same Debian 12 tools:
#   blkparse -i blk-clock-global > blk-clock-global.blkparse.txt
#   blkparse -i blk-clock-global -d blk-clock-global.bin -O; btt -i blk-clock-global.bin > blk-clock-global.btt.txt
set -eux
OUT=${1:-/tmp/out}
mkdir -p /tmp/bt /tmp/wa-mnt
mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
mkfs.ext4 -q -F /dev/vda
mount /dev/vda /tmp/wa-mnt
cd /tmp/bt
blktrace -d /dev/vda -o blk-clock-global -D /tmp/bt > /tmp/bt/blktrace.out 2>&1 &
BT=$!
sleep 2
trace-cmd record -q -b 8000 -e block:block_rq_issue -e block:block_rq_complete -e block:block_rq_insert -e block:block_bio_queue \
  -o /tmp/bt/blk-clock-global.dat sh -c 'for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/tmp/wa-mnt/f$i bs=64k count=32 conv=fsync 2>/dev/null; done; sync'
sleep 1
kill -INT $BT; wait $BT || true
cat /sys/kernel/tracing/trace_clock > /tmp/bt/trace_clock.txt || true
uname -a > /tmp/bt/uname.txt
cp /tmp/bt/* "$OUT"/
