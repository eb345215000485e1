#!/bin/bash
# Capture 27: all-events-ext4-v7-zstd.dat
# Every event the kernel offers (`trace-cmd record -e all`), unfiltered, the way a
# user records when they do not know yet what to look for: some 300 event types of
# every subsystem, with every field layout the kernel uses (fixed and dynamic
# arrays, __data_loc strings, cpumasks, signed and unsigned fields of 1-8 bytes, and
# pointers printed as symbols, which show as addresses here because kallsyms is hidden).
# Workload: one buffered writer on ext4 (1 GiB loop device): 32 MiB in 64 KiB writes,
# fsync, then a directory walk (find /usr/share, stat of every entry) and sync(1). The
# whole machine is traced, so other processes' events are in it too. Short on purpose:
# `-e all` records about a million events a second here.
# trace-cmd defaults (v7, zstd), kallsyms hidden (capture/tc-record-small).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=all-events-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
MIB=${MIB:-32}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=(-e all)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
dd if=/dev/zero of="$MNT/f" bs=64k count=$((MIB * 16)) conv=fsync status=none
find /usr/share -maxdepth 3 -printf '%s %p\n' > /dev/null
sync
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
"$TC_RECORD_SMALL" -q -b 20000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
