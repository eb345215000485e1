#!/bin/bash
# Record a large real trace.dat for the ingest benchmark: a buffered writer
# (dd, small writes) with writeback, block, syscall and scheduler events, so
# the event mix is the advisor's usual one.
#
#   benchmarks/capture_big_trace.sh OUT.dat WRITES
#
# WRITES is the number of 512-byte writes; about 3.3 events are recorded per
# write (2.2 M events for 650000). Set TC_RECORD to the trace-cmd record
# command (default `trace-cmd record`; on a locked-down host use
# ../shared/lab/tc-record). Needs root and tracefs.
set -euo pipefail
out=$1; writes=$2
TC_RECORD=${TC_RECORD:-trace-cmd record}
dir=$(mktemp -d /var/tmp/advisor-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
$TC_RECORD -q -o "$out" -b 65536 \
  -e writeback -e block:block_rq_issue -e block:block_rq_complete -e block:block_bio_queue \
  -e syscalls:sys_enter_write -e syscalls:sys_exit_write -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync \
  -e sched:sched_switch -e sched:sched_wakeup \
  -- dd if=/dev/zero of="$dir/data" bs=512 count="$writes" conv=fsync status=none
