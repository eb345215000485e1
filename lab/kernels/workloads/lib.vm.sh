# Shared part of the in-VM workload scripts (source it; bash, root, inside the VM that
# lab/kernels/capture.sh boots with one lab kernel).
#
# Every workload is recorded with the same, generic event selection so that a stock
# and a reverted capture differ only in what the kernel did:
#   the whole writeback subsystem; block_rq_issue/complete; the write, pwrite64, fsync,
#   fdatasync, sync, syncfs, sync_file_range and ioctl syscalls of the workload's own
#   processes; btrfs_sync_file, __extent_writepage, btrfs_flush_space,
#   btrfs_transaction_commit; direct, memcg and kswapd reclaim begin/end.
# trace clock mono, v7 zstd, kallsyms hidden (sample_traces/capture/tc-small) to keep
# files small.  Timings the README quotes are taken outside the trace (date +%s.%N,
# fio's JSON, the snapshot ioctl's own CLOCK_MONOTONIC).
LAB_WL_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
CAPTURE_DIR=$(readlink -f "$LAB_WL_DIR/../../../sample_traces/capture")
source "$CAPTURE_DIR/blk-lib.sh"   # vm_prepare, find_disk, size_bytes, tool_versions, sysctl_dirty

# kv_event_args COMM_FILTER -> trace-cmd record arguments, one per line
kv_event_args() {
  local f=$1 s
  echo -e; echo writeback
  echo -e; echo block:block_rq_issue
  echo -e; echo block:block_rq_complete
  for s in write pwrite64 fsync fdatasync sync syncfs sync_file_range ioctl; do
    echo -e; echo "syscalls:sys_enter_$s"; echo -f; echo "$f"
    echo -e; echo "syscalls:sys_exit_$s"; echo -f; echo "$f"
  done
  for s in btrfs_sync_file __extent_writepage btrfs_flush_space btrfs_transaction_commit; do
    echo -e; echo "btrfs:$s"
  done
  for s in direct_reclaim memcg_reclaim; do
    echo -e; echo "vmscan:mm_vmscan_${s}_begin"; echo -e; echo "vmscan:mm_vmscan_${s}_end"
  done
  echo -e; echo vmscan:mm_vmscan_kswapd_wake; echo -e; echo vmscan:mm_vmscan_kswapd_sleep
}

# kv_record VMOUT NAME COMM_FILTER WORKLOAD_SCRIPT: record the workload, then copy the
# trace and its side files (NAME.*) from $BT_DIR to VMOUT
kv_record() {
  local vmout=$1 name=$2 filter=$3 wl=$4
  local args; mapfile -t args < <(kv_event_args "$filter")
  printf '%s\n' -b 20000 -C mono --file-version 7 --compression zstd "${args[@]}" > "$BT_DIR/$name.record-args.txt"
  uname -a > "$BT_DIR/$name.uname.txt"
  tool_versions > "$BT_DIR/$name.versions.txt" 2>&1 || true
  sysctl_dirty > "$BT_DIR/$name.sysctl.txt"
  cp "$wl" "$BT_DIR/$name.workload.sh"
  ( cd "$BT_DIR" && "$CAPTURE_DIR/tc-small" record -q -b 20000 -C mono --file-version 7 --compression zstd \
      "${args[@]}" -o "$BT_DIR/$name.dat" "$wl" )
  trace-cmd report --stat -i "$BT_DIR/$name.dat" > "$BT_DIR/$name.tc-stat.txt" 2>&1 || true
  cp "$BT_DIR/$name".* "$vmout/"
  ls -l "$vmout" >&2
  touch "$vmout/DONE"
}
