#!/bin/bash
# Capture 45: stacktrace-ext4-v7-zstd.dat
# `trace-cmd record -T`: a kernel stack trace (ftrace:kernel_stack) after every event.
# The event's format declares `unsigned long caller[8]`, but the kernel writes as many
# callers as the stack had (`size` of them, 4 to 28 in this capture), so a record is
# shorter or longer than the declaration says. 40 fsyncs of 64 KiB writes on ext4 (1 GiB loop
# device), the fsync syscalls, the page dirtying and inode writeback events and the block
# requests issued, the whole machine; kallsyms hidden (capture/tc-record-small).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
dd_fsync_ext4_capture stacktrace-ext4-v7-zstd -T -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e writeback:writeback_dirty_folio \
  -e writeback:writeback_single_inode -e block:block_rq_issue
