#!/bin/bash
# Capture 33: clock-uptime-ext4-v7-zstd.dat
# `trace-cmd record -C uptime`: the "uptime" trace clock is jiffies as clock_t
# (trace_clock_jiffies, in_ns 0 in the kernel's trace_clocks[]): hundredths of a second
# since boot, not nanoseconds, although `trace-cmd report` prints 84050.04 s of uptime
# as 0.008405004. 40 fsyncs
# of 64 KiB writes on ext4 (1 GiB loop device), the fsync syscalls and the writeback
# events, the whole machine; kallsyms hidden (capture/tc-record-small).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
dd_fsync_ext4_capture clock-uptime-ext4-v7-zstd -C uptime -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e writeback:writeback_single_inode -e writeback:writeback_written
