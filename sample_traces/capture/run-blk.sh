#!/bin/bash
# Re-create the VM samples (blktrace captures 10-14 and capture 17) from scratch, then manifest.json.
# Root; each capture boots shared/lab/vm-run's VM (~1-1.5 min each, 17 ~4 min; ~10 min in all).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
for s in 10-blk-ext4-fsync.sh 11-blk-dm-split-remap.sh 12-blk-lost-events.sh 13-blk-dm-cgroup.sh 14-blk-stdin-stream.sh \
         17-fsync-reclaim-btrfs.sh; do
  echo "=== $s" >&2
  ./"$s"
done
./make_manifest.py
