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
# (printf, not echo: bash's echo takes "-e" for its own option and prints nothing)
kv_event_args() {
  local f=$1 s
  printf -- '-e\n%s\n' writeback block:block_rq_issue block:block_rq_complete
  for s in write pwrite64 fsync fdatasync sync syncfs sync_file_range ioctl; do
    printf -- '-e\n%s\n-f\n%s\n' "syscalls:sys_enter_$s" "$f" "syscalls:sys_exit_$s" "$f"
  done
  printf -- '-e\nbtrfs:%s\n' btrfs_sync_file __extent_writepage btrfs_flush_space btrfs_transaction_commit
  printf -- '-e\nvmscan:mm_vmscan_%s\n' direct_reclaim_begin direct_reclaim_end memcg_reclaim_begin \
    memcg_reclaim_end kswapd_wake kswapd_sleep
}

# kv_slow_disk SIZE_MB SERVICE_MS NAME -> /dev/kvslow: a memory-backed null_blk device
# (configfs) that completes every request SERVICE_MS ms after it is issued (irqmode 2,
# timer), 64 in flight per queue.  The scratch virtio disk is a file in the host's page
# cache: a write costs ~0.1 ms there and per-write waits are lost in the emulated CPU's
# noise; here each costs a known time, and block_rq_issue -> block_rq_complete shows it
# (dm-delay would hold bios above the request layer, where the trace does not see them).
# Its settings go to $BT_DIR/NAME.device.txt.
kv_slow_disk() {
  local mb=$1 ms=$2 name=$3 c=/sys/kernel/config/nullb/kvslow f
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
  mkdir "$c"
  echo "$mb" > "$c/size"; echo 1 > "$c/memory_backed"; echo 4096 > "$c/blocksize"
  echo 2 > "$c/irqmode"; echo $((ms * 1000000)) > "$c/completion_nsec"; echo 1 > "$c/power"
  # 6.0+ names a configfs-made disk after its directory (/dev/kvslow), older ones nullb<index>
  local dev=/dev/kvslow
  [ -d /sys/block/kvslow ] || dev=/dev/nullb$(cat "$c/index")
  [ -b "$dev" ] || mknod "$dev" b $(tr ':' ' ' < "/sys/block/${dev#/dev/}/dev")
  { echo "device $dev"; echo "service_ms $ms"
    for f in size memory_backed blocksize irqmode completion_nsec hw_queue_depth submit_queues queue_mode; do
      echo "nullb/$f $(cat "$c/$f")"; done
    echo "queue/stable_writes $(cat /sys/block/${dev#/dev/}/queue/stable_writes)"
    echo "queue/scheduler $(cat /sys/block/${dev#/dev/}/queue/scheduler)"; } > "$BT_DIR/$name.device.txt"
  echo "$dev"
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
