#!/bin/bash
# Capture 42: sync-fio-shared-disk-ext4-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
# A sync on a filesystem whose disk another filesystem is writing to at the same time,
# recorded with nothing filtered. ext4 on a 2 GiB loop device (direct-io, not throttled)
# whose image lives on the host's root filesystem (/dev/vda, 254:0); fio with two 4 KiB
# buffered writers for $RUNTIME s, one random with an fsync every 16 writes, one
# sequential with an fdatasync every 64, each capped at $RATE; $HOST_AT s in, dd writes
# $HOST_MB MB (buffered, 1 MiB blocks) to a file on the host's filesystem, and $SYNC_AT s
# in, `sync`, which writes both filesystems.
# Recorded: the whole writeback and block subsystems and the sync, fsync and fdatasync
# calls of every task. trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: `time sync` and date +%s.%N around it, Dirty/Writeback
# (/proc/meminfo) before and after the sync, fio's JSON report, the loop device's stat.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}
NAME=sync-fio-shared-disk-ext4-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; IMG=$WORK/disk.img
MNT=/tmp/wa-mnt-shared$RUN
RUNTIME=${RUNTIME:-5}; RATE=${RATE:-6m}; HOST_AT=${HOST_AT:-1.5}; HOST_MB=${HOST_MB:-600}; SYNC_AT=${SYNC_AT:-2}
BUF=${BUF:-20000}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 2G)
trap 'rm -f "$WORK/host-writer"; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
log "device $DEV bdi $(loop_bdi "$DEV")"
sync

mapfile -t ARGS < <(ev_args writeback block; sys_event_args "" sync syncfs fsync fdatasync)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/job.fio" <<JOB
[global]
directory=$MNT
size=128m
bs=4k
ioengine=psync
time_based=1
runtime=$RUNTIME
rate=$RATE
[random-fsync]
rw=randwrite
fsync=16
[sequential-fdatasync]
rw=write
fdatasync=64
JOB
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
$(loop_state_line "$DEV")
state start > "$M.state.txt"
fio --output-format=json --output="$M.fio.json" "$WORK/job.fio" &
FIO=\$!
sleep $HOST_AT
dd if=/dev/zero of="$WORK/host-writer" bs=1M count=$HOST_MB status=none &
sleep \$(awk "BEGIN { print $SYNC_AT - $HOST_AT }")
$(timed_sync_lines "$M")
wait \$FIO
wait
state end >> "$M.state.txt"
WL
record_sync_workload "$NAME" "${ARGS[@]}"
