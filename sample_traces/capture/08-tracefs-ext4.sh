#!/bin/bash
# Capture 8: tracefs-ext4.trace.txt, tracefs-ext4.noirq.trace.txt, tracefs-ext4.dat
#            (three views of ONE ring buffer) and tracefs-ext4.trace_pipe.txt.
# ext4 on a 1 GiB loop device.  Events are enabled by writing to tracefs directly
# (no trace-cmd), record-tgid on; workload: dd 32 MiB of buffered writes + sync.
#  1. cat trace                          -> tracefs-ext4.trace.txt   (irq-info + tgid)
#  2. irq-info=0, record-tgid=0, cat trace -> tracefs-ext4.noirq.trace.txt
#     (reading `trace` does not consume the buffer)
#  3. trace-cmd extract (capture/tc-small, kallsyms hidden, trace-cmd defaults: v7 zstd)
#                                        -> tracefs-ext4.dat
#  4. a second short run read live: timeout 2 cat trace_pipe -> tracefs-ext4.trace_pipe.txt
# At the end the tracing state is restored (events off, filters cleared, options and
# buffer size as found, tracing_on=1).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=tracefs-ext4
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
T=$TRACEFS
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
mountpoint -q $T || mount -t tracefs nodev $T

# --- remember the state we change
OLD_BUF=$(cat $T/buffer_size_kb); OLD_IRQ=$(cat $T/options/irq-info)
OLD_TGID=$(cat $T/options/record-tgid); OLD_ON=$(cat $T/tracing_on)
[ -z "$(cat $T/set_event)" ] || { log "events already enabled in tracefs: $(head -3 $T/set_event)"; exit 1; }
ENABLED=()
restore() {
  local e
  for e in "${ENABLED[@]}"; do echo 0 > "$T/events/$e/enable"; echo 0 > "$T/events/$e/filter"; done
  echo "$OLD_IRQ" > $T/options/irq-info; echo "$OLD_TGID" > $T/options/record-tgid
  echo "$OLD_BUF" > $T/buffer_size_kb; : > $T/trace; echo "$OLD_ON" > $T/tracing_on
  cleanup_fs "$MNT" "$DEV" "$IMG"
}
DEV=$(setup_loop "$IMG" 1G)
trap restore EXIT
mkfs.ext4 -q -F "$DEV"; mount "$DEV" "$MNT"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

# enable EVENT FILTER
enable() { echo "$2" > "$T/events/$1/filter"; echo 1 > "$T/events/$1/enable"; ENABLED+=("$1")
           [ "$2" = 0 ] && ARGS+=(-e "${1/\//:}") || ARGS+=(-e "${1/\//:}" -f "$2"); }
ARGS=()
setup_events() {
  local e fmt
  for e in $T/events/writeback/*/; do
    e=writeback/$(basename "$e"); fmt=$T/events/$e/format
    if grep -q 'char name\[32\]' "$fmt"; then enable "$e" "name == \"$BDI\""
    elif grep -q 'char bdi\[32\]' "$fmt"; then enable "$e" "bdi == \"$BDI\""
    elif grep -q 'dev_t dev;' "$fmt"; then enable "$e" "dev == $DEVT"
    else enable "$e" 0; fi
  done
  for e in block_rq_insert block_rq_issue block_rq_complete; do enable "block/$e" "dev == $DEVT"; done
  for e in write fsync fdatasync sync; do
    enable "syscalls/sys_enter_$e" 'comm == "dd" || comm == "sync"'
    enable "syscalls/sys_exit_$e"  'comm == "dd" || comm == "sync"'
  done
}
workload() {  # workload TAG
  dd if=/dev/zero of="$MNT/$1.dat" bs=64k count=512 status=none
  sync
}

echo 0 > $T/tracing_on
echo 8192 > $T/buffer_size_kb
echo 1 > $T/options/record-tgid; echo 1 > $T/options/irq-info
setup_events
save_args "$NAME" "${ARGS[@]}"   # recorded in trace-cmd -e/-f notation
: > $T/trace                      # clear
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
echo 1 > $T/tracing_on
workload a
sleep 0.5
echo 0 > $T/tracing_on

cat $T/trace > "$OUTDIR/$NAME.trace.txt"
echo 0 > $T/options/irq-info; echo 0 > $T/options/record-tgid
cat $T/trace > "$OUTDIR/$NAME.noirq.trace.txt"
echo "$OLD_IRQ" > $T/options/irq-info
# trace-cmd extract reads (and consumes) the same ring buffer
(cd "$WORK" && "$TC_SMALL" extract -o "$OUTDIR/$NAME.dat") > "$WORK/extract.log" 2>&1 || { cat "$WORK/extract.log" >&2; exit 1; }
trace_summary "$OUTDIR/$NAME.dat"

# --- live trace_pipe capture of a second, separate run (same events, tgid on)
# (trace-cmd extract disabled all events on its way out, so enable them again)
setup_events
echo 1 > $T/options/record-tgid
: > $T/trace
echo 1 > $T/tracing_on
timeout 2 cat $T/trace_pipe > "$OUTDIR/$NAME.trace_pipe.txt" &
CAT=$!
sleep 0.2
workload b
wait $CAT || true
echo 0 > $T/tracing_on

n_txt=$(grep -vc '^#' "$OUTDIR/$NAME.trace.txt" || true)
n_noirq=$(grep -vc '^#' "$OUTDIR/$NAME.noirq.trace.txt" || true)
n_dat=$(trace-cmd report "$OUTDIR/$NAME.dat" 2>/dev/null | grep -cE '^ *\S.*\[[0-9]+\] +[0-9]+\.[0-9]+: ' || true)
log "events: trace.txt=$n_txt noirq.trace.txt=$n_noirq dat=$n_dat trace_pipe=$(wc -l < "$OUTDIR/$NAME.trace_pipe.txt")"
