#!/bin/bash
# background buffered stream, no fsync: the flusher (background threshold 16 MiB) writes it
date +%s.%N > /tmp/bt/dd.epoch
dd if=/dev/zero of=/tmp/wa-mnt/stream.dat bs=64k count=512 status=none &
DD=$!
fio --name=fsyncw --filename=/tmp/wa-mnt/fio.dat --ioengine=psync --rw=randwrite --bs=4k --size=8M \
  --fsync=8 --rate_iops=500 --runtime=3 --time_based --randrepeat=0 \
  --output-format=json --output=/tmp/bt/blk-ext4-fsync.fio.json
wait $DD
date +%s.%N >> /tmp/bt/dd.epoch
date +%s.%N > /tmp/bt/sync.epoch
{ time -p sync ; } 2> /tmp/bt/sync.time
date +%s.%N >> /tmp/bt/sync.epoch
sleep 0.5
