#!/bin/bash
# Capture 28: instance-ext4-v7-zstd.dat
# A trace instance besides the top buffer, as `trace-cmd record -B NAME` makes one
# (users pick an instance so as not to disturb another tool using the top buffer):
# sched:sched_switch in the top buffer, the whole writeback and block subsystems in the
# instance "wa". `trace-cmd report` merges the two in time order and prefixes the
# instance's events with "wa: ". Workload: dd of 12.5 MiB in 64 KiB blocks with fsync
# on ext4 (1 GiB loop device), then sync(1); the whole machine is traced.
# trace-cmd defaults (v7, zstd); FILE_VERSION=6 records file version 6 instead
# (capture 29). Under kernel lockdown trace-cmd cannot write the
# instance's function-tracer files either, so the instance is made here and those
# files are masked in a private mount namespace (as capture/tc-small does for the top
# ones), then `trace-cmd record -B wa` uses it; kallsyms hidden likewise.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
FILE_VERSION=${FILE_VERSION:-7}
if [ "$FILE_VERSION" = 7 ]; then NAME=instance-ext4-v7-zstd; VERSION_ARGS=(); else NAME=instance-ext4-v$FILE_VERSION; VERSION_ARGS=(--file-version "$FILE_VERSION"); fi
# DOUBLED=1 (capture 32): block_rq_issue and block_rq_complete in the top buffer too.
TOP_EVENTS=(-e sched:sched_switch)
if [ "${DOUBLED:-0}" = 1 ]; then
  NAME=instance-doubled-ext4-v7-zstd
  TOP_EVENTS+=(-e block:block_rq_issue -e block:block_rq_complete)
fi
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
INST=$TRACEFS/instances/wa
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"; rmdir "$INST" 2>/dev/null || true' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

ARGS=("${VERSION_ARGS[@]}" "${TOP_EVENTS[@]}" -B wa -e writeback -e block)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
dd if=/dev/zero of="$MNT/f" bs=64k count=200 conv=fsync status=none
sync
WL
chmod +x "$WORK/workload.sh"
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
mkdir -p "$INST"
unshare -m --propagation private bash -c '
  set -eu
  D=$(mktemp -d); echo 1 > "$D/ftrace_enabled"
  mount --bind "$D/ftrace_enabled" /proc/sys/kernel/ftrace_enabled
  for dir in '"$TRACEFS"' '"$INST"'; do
    for f in set_ftrace_filter set_ftrace_notrace set_graph_function set_graph_notrace set_ftrace_pid set_ftrace_notrace_pid; do
      [ -e "$dir/$f" ] || continue
      g=$D/$(echo "$dir/$f" | tr / _); : > "$g"; mount --bind "$g" "$dir/$f"
    done
  done
  : > "$D/kallsyms"; mount --bind "$D/kallsyms" /proc/kallsyms
  exec trace-cmd record -q -o "$0" "$@"' "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
