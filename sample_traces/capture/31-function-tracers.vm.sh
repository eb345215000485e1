#!/bin/bash
# Captures 31: function-ext4-v7-zstd.dat and funcgraph-ext4-v7-zstd.dat
# The function tracers next to events, as a user chasing a stall records them: the
# `function` tracer (ftrace:function events, ip and parent_ip) and `function_graph`
# (ftrace:funcgraph_entry / funcgraph_exit, with depth, calltime and rettime) limited by
# -l to a few ext4 and page-cache functions, with the writeback and block events.
# The in-VM part (Debian's 6.1 kernel in shared/lab/vm-run, 2 vCPUs, scratch disk
# /dev/vda): the host's locked-down kernel refuses the function tracer. Run by the host
# wrapper 31-function-tracers.sh; usage: 31-function-tracers.vm.sh VMOUT.
# -l matters under the VM's emulated CPU: without it every kernel function goes through
# the tracer and the run does not finish in 15 minutes.
set -eux
OUT=$1
mkdir -p "$OUT/measurements" /tmp/ft /tmp/wa-mnt
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
mkfs.ext4 -q -F /dev/vda
mount /dev/vda /tmp/wa-mnt
cd /tmp/ft
WL='for i in 1 2 3; do dd if=/dev/zero of=/tmp/wa-mnt/f$i bs=64k count=16 conv=fsync status=none; done; sync'

ARGS=(-p function -l ext4_sync_file -l file_write_and_wait_range -e writeback -e block)
printf '%s\n' "${ARGS[@]}" > "$OUT/measurements/function-ext4-v7-zstd.record-args.txt"
trace-cmd record -q -b 1024 "${ARGS[@]}" -o /tmp/ft/function-ext4-v7-zstd.dat sh -c "$WL"

ARGS=(-p function_graph -l ext4_sync_file -l file_write_and_wait_range -l ext4_writepages -e writeback -e block)
printf '%s\n' "${ARGS[@]}" > "$OUT/measurements/funcgraph-ext4-v7-zstd.record-args.txt"
trace-cmd record -q -b 1024 "${ARGS[@]}" -o /tmp/ft/funcgraph-ext4-v7-zstd.dat sh -c "$WL"

for n in function-ext4-v7-zstd funcgraph-ext4-v7-zstd; do uname -a > "$OUT/measurements/$n.uname.txt"; done
cp /tmp/ft/*.dat "$OUT"/
touch "$OUT/DONE"
