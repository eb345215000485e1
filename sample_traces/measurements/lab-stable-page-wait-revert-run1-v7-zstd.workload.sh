#!/bin/bash
fio --name=rewrite --filename=/tmp/wa-mnt/rewrite.dat --ioengine=psync --rw=write --bs=4k --size=256k \
  --sync_file_range=write:64 --rate_iops=2000 --runtime=4 --time_based --randrepeat=0 \
  --output-format=json --output=/tmp/bt/lab-stable-page-wait-revert-run1-v7-zstd.fio.json
