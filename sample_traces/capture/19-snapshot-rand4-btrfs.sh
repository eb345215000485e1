#!/bin/bash
# Capture 19: snapshot-rand4-btrfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# The snapshot seed's multi-writer job at real scale: 4 fio random buffered writers
# (randwrite, libaio iodepth 32, bs 4k, numjobs 4 on one file, $RATE each) in a btrfs
# subvolume, a read-only snapshot while they run.  Same script as capture 18 (MODE=rand4).
exec env MODE=rand4 "$(dirname "$(readlink -f "$0")")/18-snapshot-seq-btrfs.sh" "$@"
