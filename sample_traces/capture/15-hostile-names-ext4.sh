#!/bin/bash
# Capture 15: hostile-names-ext4-v7-zstd.dat
# Trace strings that must be escaped wherever they are shown (HTML report, tables).
# Two buffered writers on ext4 (1 GiB loop device) whose process names are markup:
#   - executed through a symlink named ".../hostile/<script>alert(1)</script>" (a
#     directory "<script>alert(1)<" holding the link "script>"), so the full string is
#     in sched:sched_process_exec's `filename`; the writer then renames itself with
#     prctl(PR_SET_NAME, "<script>alert(1)</script>") and the kernel keeps 15 bytes
#     of it as comm: "<script>alert(1";
#   - executed through ".../hostile/Tom & Jerry's" and renamed to
#     `Tom & "Jerry's"` (quotes, ampersand, apostrophe; exactly 15 bytes).
# Each writes 16 MiB in 64 KiB writes with an fsync every 4 MiB, then calls sync(2).
# The bdi is limited to 1 MiB of dirty pages (strict_limit=1, max_bytes), so
# balance_dirty_pages throttles the writers and the trace holds real stalls.
# kallsyms hidden (capture/tc-record-small), trace-cmd defaults (v7, zstd).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=hostile-names-ext4-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img; H=$WORK/hostile
MIB=${MIB:-16}
M=$OUTDIR/measurements/$NAME
mkdir -p "$WORK" "$MNT" "$H/<script>alert(1)<"
tracing_busy && exit 1
PY=$(readlink -f /usr/bin/python3)
ln -sfn "$PY" "$H/<script>alert(1)</script>"
ln -sfn "$PY" "$H/Tom & Jerry's"

DEV=$(setup_loop "$IMG" 1G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
echo 1 > "/sys/class/bdi/$BDI/strict_limit"
echo $((1024 * 1024)) > "/sys/class/bdi/$BDI/max_bytes"
log "device $DEV bdi $BDI devt $DEVT max_bytes=$(cat /sys/class/bdi/$BDI/max_bytes)"
sync

cat > "$WORK/writer.py" <<'PY'
import ctypes, os, sys
name, path, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME: comm keeps 15 bytes
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
chunk = b"x" * 65536
for i in range(mib * 16):
    os.write(fd, chunk)
    if i % 64 == 63:
        os.fsync(fd)
os.close(fd)
os.sync()
PY

COMMS='comm == "<script>alert(1" || comm ~ "Tom & *"'
mapfile -t ARGS < <(
  printf '%s\n' -e writeback:global_dirty_state -e writeback:balance_dirty_pages -f "bdi == \"$BDI\""
  printf '%s\n' -e writeback:writeback_dirty_folio -f "name == \"$BDI\""
  printf '%s\n' -e writeback:writeback_single_inode -f "name == \"$BDI\""
  printf '%s\n' -e writeback:folio_wait_writeback -f "name == \"$BDI\""
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args "$COMMS" fsync sync
  printf '%s\n' -e sched:sched_process_exec -f 'filename ~ "*/hostile/*"'
)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
"$H/<script>alert(1)</script>" "$WORK/writer.py" '<script>alert(1)</script>' "$MNT/a.dat" $MIB &
"$H/Tom & Jerry's" "$WORK/writer.py" 'Tom & "Jerry'"'"'s"' "$MNT/b.dat" $MIB &
wait
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
"$TC_RECORD_SMALL" -q -b 20000 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
