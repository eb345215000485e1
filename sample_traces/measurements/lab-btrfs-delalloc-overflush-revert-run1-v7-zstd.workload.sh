#!/bin/bash
t0=$(date +%s.%N); tar -xf /tmp/bt/src.tar -C /tmp/wa-mnt; t1=$(date +%s.%N)
echo "$t0 $t1" > /tmp/bt/lab-btrfs-delalloc-overflush-revert-run1-v7-zstd.tar-epoch.txt
t0=$(date +%s.%N); sync; t1=$(date +%s.%N)
echo "$t0 $t1" > /tmp/bt/lab-btrfs-delalloc-overflush-revert-run1-v7-zstd.sync-epoch.txt
