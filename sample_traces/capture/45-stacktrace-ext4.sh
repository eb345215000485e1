#!/bin/bash
# Capture 45: stacktrace-ext4-v7-zstd.dat
# `trace-cmd record -T`: a kernel stack trace (ftrace:kernel_stack) after every event.
# The event's format declares `unsigned long caller[8]`, but the kernel writes as many
# callers as the stack had (`size` of them, 7 to 30 here), so a record is shorter or
# longer than the declaration says. 40 fsyncs of 64 KiB writes on ext4 (1 GiB loop
# device), the fsync syscalls, the page dirtying and inode writeback events and the block
# requests issued, the whole machine; kallsyms hidden (capture/tc-record-small).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=stacktrace-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=(-T -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e writeback:writeback_dirty_folio
      -e writeback:writeback_single_inode -e block:block_rq_issue)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
for i in \$(seq 40); do dd if=/dev/zero of="$MNT/f\$i" bs=64k count=1 conv=fsync status=none; done
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
"$TC_RECORD_SMALL" -q -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
