#!/bin/bash
echo $$ > /sys/fs/cgroup/kv/cgroup.procs
cat /sys/fs/cgroup/kv/memory.stat > /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.memcg-before.txt; cat /sys/fs/cgroup/kv/memory.events >> /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.memcg-before.txt
cat /proc/vmstat > /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.vmstat-before.txt
fio --name=writers --directory=/tmp/wa-mnt --rw=randwrite --bs=4k --size=48M --numjobs=4 --ioengine=psync --fallocate=none --invalidate=0 --group_reporting=1 --fsync=4 --rate_iops=100 --runtime=6 --time_based --randrepeat=0 \
  --output-format=json --output=/tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.fio.json
cat /sys/fs/cgroup/kv/memory.stat > /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.memcg-after.txt; cat /sys/fs/cgroup/kv/memory.events >> /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.memcg-after.txt
cat /proc/vmstat > /tmp/bt/lab-btrfs-full-fsync-fallback-stock-run2-v7-zstd.vmstat-after.txt
