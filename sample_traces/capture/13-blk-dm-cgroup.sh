#!/bin/bash
# Capture 13: blk-dm-cgroup.* -- capture 11 again with options/blk_cgroup=1, so every
# bio-based record carries the id of the workload's cgroup-v2 child (or of the root).
# Same in-VM script (11-blk-dm-split-remap.vm.sh), same workload.
exec env BLK_CGROUP=1 NAME=blk-dm-cgroup "$(dirname "$(readlink -f "$0")")/11-blk-dm-split-remap.sh" "$@"
