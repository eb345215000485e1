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
NAME=clock-uptime-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=(-C uptime -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e writeback:writeback_single_inode -e writeback:writeback_written)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
for i in \$(seq 40); do dd if=/dev/zero of="$MNT/f\$i" bs=64k count=1 conv=fsync status=none; done
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
"$TC_RECORD_SMALL" -q -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
