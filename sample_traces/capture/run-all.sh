#!/bin/bash
# Re-create every sample in ../ from scratch, then manifest.json.  Root, ~2-3 minutes.
# 05 needs the zlib-capable trace-cmd under /opt/tc-zlib (see README).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
for s in 01-fio-ext4-v7-zstd.sh 02-snapshot-btrfs-v7-none.sh 03-sync-xfs-v6.sh \
         04-dbench-btrfs-v7-zstd.sh 05-dbench-btrfs-v7-zlib.sh 06-stable-pages-ext4-v7-zstd.sh \
         07-lost-events-v7-zstd.sh 08-tracefs-ext4.sh 09-report-text.sh 16-untar-btrfs-v7-zstd.sh; do
  echo "=== $s" >&2
  ./"$s"
  sleep 2
done
./make_manifest.py
