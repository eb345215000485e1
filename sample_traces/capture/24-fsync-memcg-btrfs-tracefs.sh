#!/bin/bash
# Capture 24: fsync-memcg-btrfs-run3-tracefs.trace.txt and .dat -- the scenario of capture
# 21 (fsync-heavy fio writers in a memory-limited cgroup on btrfs, same events, same
# workload) recorded the way a user does by hand: each event enabled and filtered by
# writing to /sys/kernel/tracing, tracefs' default per-CPU buffer (1408 KB, overwrite
# mode: the oldest events are overwritten once it fills; the text's header counts
# entries-in-buffer/entries-written), default trace clock (local), then `cat trace`, and
# `trace-cmd extract` of the same ring buffer into the paired .dat (trace-cmd's
# defaults: v7 zstd; kallsyms hidden).  A third run of the scenario (RUN=3), role "fit".
exec env TEXT=1 RUN=${RUN:-3} "$(dirname "$(readlink -f "$0")")/21-fsync-memcg-btrfs.sh" "$@"
