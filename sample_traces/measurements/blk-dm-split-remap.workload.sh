#!/bin/bash
set -e
echo $$ > /sys/fs/cgroup/wa-blk/cgroup.procs
# 1. large O_DIRECT writes and reads through dm-0: 1 MiB bios split to 16 KiB on vda
dd if=/dev/zero of=/dev/dm-0 oflag=direct bs=1M count=1 status=none
dd if=/dev/dm-0 of=/dev/null iflag=direct bs=1M count=1 status=none
# 2. buffered sequential writes (page cache of the block device), back merges
dd if=/dev/zero of=/dev/dm-0 bs=4k count=256 seek=4096 conv=fsync status=none
# 3. random 4 KiB O_DIRECT writes over 64 KiB, 16 per io_submit (plug), front/back merges
fio --name=merge --filename=/dev/dm-0 --direct=1 --ioengine=libaio --iodepth=16 --iodepth_batch_submit=16 \
  --iodepth_batch_complete_min=16 --rw=randwrite --bs=4k --size=64k --offset=8m --loops=4 \
  --randrepeat=0 --output-format=terse > /dev/null
