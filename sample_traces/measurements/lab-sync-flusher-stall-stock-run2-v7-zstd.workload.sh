#!/bin/bash
/work/wt/kernels/lab/kernels/workloads/smallfiles.py /tmp/wa-mnt/a f 4000 > /tmp/bt/lab-sync-flusher-stall-stock-run2-v7-zstd.writer1.txt
/work/wt/kernels/lab/kernels/workloads/smallfiles.py /tmp/wa-mnt/b g 100000 4096 0 /tmp/bt/stop > /tmp/bt/lab-sync-flusher-stall-stock-run2-v7-zstd.writer2.txt &
W=$!
sleep 0.5
grep -E '^(Dirty|Writeback):' /proc/meminfo > /tmp/bt/lab-sync-flusher-stall-stock-run2-v7-zstd.meminfo-at-sync.txt
t0=$(date +%s.%N); sync; t1=$(date +%s.%N)
echo "$t0 $t1" > /tmp/bt/lab-sync-flusher-stall-stock-run2-v7-zstd.sync-epoch.txt
sleep 0.5
touch /tmp/bt/stop; wait $W
