#!/bin/bash
fio --name=job1 --filename=/tmp/wa-mnt/sub/testfile --ioengine=libaio --iodepth=32 --bs=4k --rw=write \
  --size=1G --direct=0 --thread=1 --rate=8m --time_based --runtime=120 \
  --output-format=json --output=/tmp/bt/lab-btrfs-snapshot-livelock-revert-run1-v7-zstd.fio.json &
FIO=$!
sleep 4
grep -E '^(Dirty|Writeback):' /proc/meminfo > /tmp/bt/lab-btrfs-snapshot-livelock-revert-run1-v7-zstd.meminfo-at-snapshot.txt
t0=$(date +%s.%N)
/work/wt/kernels/sample_traces/capture/snapshot-ioctl /tmp/wa-mnt/sub /tmp/wa-mnt/snap /tmp/bt/lab-btrfs-snapshot-livelock-revert-run1-v7-zstd.snapshot-ioctl.json
t1=$(date +%s.%N)
echo "$t0 $t1" > /tmp/bt/lab-btrfs-snapshot-livelock-revert-run1-v7-zstd.snapshot-epoch.txt
sleep 1
kill -INT $FIO; wait $FIO || true
