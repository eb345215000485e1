#!/bin/bash
cat /proc/meminfo > /tmp/bt/meminfo-before.txt; cat /proc/vmstat > /tmp/bt/vmstat-before.txt
fio --name=fsyncw --filename=/tmp/wa-mnt/db.dat --ioengine=psync --rw=randwrite --bs=4k --size=96M \
  --fsync=4 --rate_iops=200 --runtime=20 --time_based --randrepeat=0 \
  --output-format=json --output=/tmp/bt/fsync-reclaim-btrfs-v7-zstd.fio.json &
FIO=$!
sleep 1
# the cache streamer: buffered reads of the scratch disk, 128 MiB at a time, round and round
( off=0; while kill -0 $FIO 2>/dev/null; do
    dd if=/dev/vda of=/dev/null bs=1M count=128 skip=$off 2>> /tmp/bt/reader.txt; off=$(( (off + 128) % 2048 )); done ) &
READER=$!
wait $FIO
wait $READER
grep -E 'MemAvailable|MemFree|^Cached' /proc/meminfo >> /tmp/bt/hog.txt
cat /proc/meminfo > /tmp/bt/meminfo-after.txt; cat /proc/vmstat > /tmp/bt/vmstat-after.txt
