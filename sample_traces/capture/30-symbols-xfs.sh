#!/bin/bash
# Capture 30: symbols-xfs-v7-zstd.dat
# Pointers that the print formats show as kernel symbols (%ps, %pS), with the
# trace.dat's copy of /proc/kallsyms kept (trace-cmd's default): every xfs event
# carries the caller's address (`caller_ip`, printed `xfs_trans_alloc+0x8f`), the
# workqueue events the function a worker runs (`wb_workfn`, the flusher's).
# `trace-cmd record -e xfs -e workqueue -e writeback`, unfiltered, the whole machine;
# xfs on a 1 GiB loop device: 4 MiB in 64 KiB writes with fsync, then sync(1).
# trace-cmd defaults (v7, zstd); only the function-tracer files are masked
# (capture/tc-small with KEEP_KALLSYMS=1).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=symbols-xfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.xfs -q -f "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=(-e xfs -e workqueue -e writeback)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
dd if=/dev/zero of="$MNT/f" bs=64k count=64 conv=fsync status=none
sync
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
KEEP_KALLSYMS=1 "$TC_RECORD_SMALL" -q -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
