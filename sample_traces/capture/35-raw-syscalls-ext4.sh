#!/bin/bash
# Capture 35: raw-syscalls-ext4-v7-zstd.dat, and with BOTH=1 raw-and-named-syscalls-ext4-v7-zstd.dat
# The syscalls recorded as `-e raw_syscalls` (sys_enter/sys_exit: the syscall number and
# its six arguments, one pair of events for every syscall of every task) instead of the
# per-syscall `syscalls:sys_enter_fsync` events, with `-e writeback -e block`, the whole
# machine. On ext4 (1 GiB loop device): 20 writes of 1 MiB each followed by fsync, two
# fdatasyncs, then 96 MiB written without fsync and a `sync`. Outside the trace:
# date +%s.%N around the sync. Kallsyms hidden (capture/tc-record-small).
# BOTH=1 also records each call's own events (sys_enter_fsync ...): the same calls twice,
# by number and by name, so the two can be compared event for event.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=raw-syscalls-ext4-v7-zstd
[ "${BOTH:-0}" = 1 ] && NAME=raw-and-named-syscalls-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=(-b 8192 -e raw_syscalls -e writeback -e block)
if [ "${BOTH:-0}" = 1 ]; then
  for c in sync fsync fdatasync write pwrite64 ioctl; do ARGS+=(-e "syscalls:sys_enter_$c" -e "syscalls:sys_exit_$c"); done
fi
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
for i in \$(seq 20); do dd if=/dev/urandom of="$MNT/f\$i" bs=1M count=1 conv=fsync status=none; done
for i in 1 2; do dd if=/dev/urandom of="$MNT/d\$i" bs=1M count=4 conv=fdatasync status=none; done
dd if=/dev/urandom of="$MNT/big" bs=1M count=96 status=none
date +%s.%N > "$M.sync-start.txt"
sync
date +%s.%N > "$M.sync-end.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
"$TC_RECORD_SMALL" -q -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
