# Shared helpers for the capture scripts (source it; needs bash, root).
#
# Conventions
#  - Scratch lives in $WORK (default /tmp/wa-capture/<capture name>), never in the repo.
#  - A capture writes its trace into $OUTDIR (default: the sample_traces directory)
#    and its outside-the-trace measurements into $OUTDIR/measurements/<name>.*.
#  - Loop devices use --direct-io=on, so the loop device behaves like a disk and its
#    backing file (on the host's /dev/vda) does not add page-cache writeback of its own.
#  - Other jobs may be writing to the host disk while we capture.  The per-inode and
#    per-page writeback events and the block events are therefore filtered in the kernel
#    to the capture's own device (bdi name / dev_t); see wb_event_args and blk_event_args.

CAPTURE_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
OUTDIR=${OUTDIR:-$(dirname "$CAPTURE_DIR")}
TC_RECORD=${TC_RECORD:-/work/shared/lab/tc-record}        # lockdown-safe trace-cmd record
TC_RECORD_SMALL=${TC_RECORD_SMALL:-$CAPTURE_DIR/tc-record-small}  # same, kallsyms hidden
TC_SMALL=${TC_SMALL:-$CAPTURE_DIR/tc-small}
TRACEFS=/sys/kernel/tracing

mkdir -p "$OUTDIR/measurements"

log() { echo "[$(date +%T)] $*" >&2; }

# kernel-internal dev_t (MKDEV: major << 20 | minor), the encoding trace events use
kdev() { echo $(( ($1 << 20) | $2 )); }

# setup_loop FILE SIZE [stable_writes 0|1] -> prints /dev/loopN
setup_loop() {
  local file=$1 size=$2 stable=${3:-}
  rm -f "$file"; truncate -s "$size" "$file"
  local dev; dev=$(losetup -f --show --direct-io=on "$file")
  if [ -n "$stable" ]; then
    echo "$stable" > "/sys/block/${dev#/dev/}/queue/stable_writes"
  fi
  echo "$dev"
}

# loop_bdi /dev/loopN -> "7:N" (the bdi name writeback events carry for ext4/xfs)
loop_bdi() { local b=${1#/dev/}; cat "/sys/block/$b/dev"; }
loop_kdev() { local mm; mm=$(loop_bdi "$1"); kdev "${mm%%:*}" "${mm##*:}"; }

# btrfs_bdi MOUNTPOINT -> "btrfs-N" (btrfs registers a private bdi per superblock)
btrfs_bdi() {
  local fsid; fsid=$(btrfs filesystem show --raw "$1" | awk '/uuid:/ {print $NF; exit}')
  basename "$(readlink -f "/sys/fs/btrfs/$fsid/bdi")"
}

# wb_event_args BDI_NAME DEVT -> trace-cmd arguments enabling every writeback:* event,
# each filtered to this bdi / device when the event has such a field.  Events with no
# device field (global_dirty_state, writeback_pages_written) are recorded unfiltered.
wb_event_args() {
  local bdi=$1 devt=$2 e fmt
  for e in "$TRACEFS"/events/writeback/*/; do
    e=$(basename "$e"); fmt="$TRACEFS/events/writeback/$e/format"
    if grep -q 'char name\[32\]' "$fmt"; then
      printf '%s\n' -e "writeback:$e" -f "name == \"$bdi\""
    elif grep -q 'char bdi\[32\]' "$fmt"; then
      printf '%s\n' -e "writeback:$e" -f "bdi == \"$bdi\""
    elif grep -q 'dev_t dev;' "$fmt"; then
      printf '%s\n' -e "writeback:$e" -f "dev == $devt"
    else
      printf '%s\n' -e "writeback:$e"
    fi
  done
}

# blk_event_args DEVT EVENT... -> -e block:EVENT -f 'dev == DEVT' for each
blk_event_args() {
  local devt=$1; shift
  local e
  for e in "$@"; do printf '%s\n' -e "block:$e" -f "dev == $devt"; done
}

# sys_event_args COMM_FILTER NAME... -> sys_enter_NAME and sys_exit_NAME, filtered
# (an empty COMM_FILTER: every task's calls, unfiltered)
sys_event_args() {
  local filt=$1; shift
  local n
  for n in "$@"; do
    if [ -n "$filt" ]; then
      printf '%s\n' -e "syscalls:sys_enter_$n" -f "$filt" -e "syscalls:sys_exit_$n" -f "$filt"
    else
      printf '%s\n' -e "syscalls:sys_enter_$n" -e "syscalls:sys_exit_$n"
    fi
  done
}

# ev_args SYSTEM:EVENT... -> -e SYSTEM:EVENT (no filter)
ev_args() { local e; for e in "$@"; do printf '%s\n' -e "$e"; done; }

# tracing_busy: refuse to run if someone else is recording (the top-level ring buffer is global)
tracing_busy() {
  local busy
  busy=$(pgrep -a -x trace-cmd | grep -E ' (record|extract|start|stream|profile|stat|reset)( |$)' || true)
  if [ -n "$busy" ]; then log "another trace-cmd is using the ring buffer: $busy"; return 0; fi
  return 1
}

# cleanup_fs MOUNTPOINT LOOPDEV FILE
cleanup_fs() {
  local mnt=$1 dev=$2 file=$3
  if mountpoint -q "$mnt"; then umount "$mnt" || umount -l "$mnt"; fi
  if [ -n "$dev" ] && losetup "$dev" >/dev/null 2>&1; then losetup -d "$dev"; fi
  rm -f "$file"
}

# trace_summary FILE -> short per-file report on stderr (size, version, compression, kallsyms)
trace_summary() {
  local f=$1
  ls -l "$f" >&2
  trace-cmd dump --summary "$f" 2>/dev/null | grep -E 'Version|Compression algorithm|Kallsyms|flyrecord' >&2 || true
}

# save_args NAME ARG... -> measurements/NAME.record-args.txt (the exact -e/-f list used)
save_args() {
  local name=$1; shift
  printf '%s\n' "$@" > "$OUTDIR/measurements/$name.record-args.txt"
}

# rm_cgroup DIR: remove a cgroup we created (retry while exited tasks are still reaped)
rm_cgroup() {
  local i
  for i in $(seq 50); do rmdir "$1" 2>/dev/null && return 0; [ -d "$1" ] || return 0; sleep 0.2; done
  log "could not remove cgroup $1"
}

# dd_fsync_ext4_capture NAME ARG...: the small ext4 capture of 33 and 45, recorded with
# `trace-cmd record ARG...` (capture/tc-record-small, kallsyms hidden) into
# $OUTDIR/NAME.dat: 40 `dd` runs of 64 KiB with conv=fsync on a 1 GiB ext4 loop device.
# Sets WORK, MNT, IMG and DEV, and the EXIT trap that unmounts and detaches them.
dd_fsync_ext4_capture() {
  local name=$1; shift
  WORK=${WORK:-/tmp/wa-capture/$name}; MNT=$WORK/mnt; IMG=$WORK/disk.img
  mkdir -p "$WORK" "$MNT"
  tracing_busy && exit 1
  DEV=$(setup_loop "$IMG" 1G)
  trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
  mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
  log "device $DEV bdi $(loop_bdi "$DEV")"
  sync

  save_args "$name" "$@"
  cat > "$WORK/workload.sh" <<WL
#!/bin/bash
for i in \$(seq 40); do dd if=/dev/zero of="$MNT/f\$i" bs=64k count=1 conv=fsync status=none; done
WL
  chmod +x "$WORK/workload.sh"
  uname -a > "$OUTDIR/measurements/$name.uname.txt"
  "$TC_RECORD_SMALL" -q -o "$OUTDIR/$name.dat" "$@" "$WORK/workload.sh"
  trace_summary "$OUTDIR/$name.dat"
}
