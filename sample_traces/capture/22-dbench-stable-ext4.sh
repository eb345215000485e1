#!/bin/bash
# Capture 22: dbench-stable$STABLE-ext4-run$RUN-v7-zstd.dat
#   STABLE=1|0 (the loop queue's stable_writes), RUN=1 fit, RUN=2 holdout.
# The stable-pages seed's benchmark (dbench, 4 clients, as in the commit's ext4 numbers)
# at real scale: ext4 on a 4 GiB loop device (direct-io, writes capped at $DEV_MBPS MiB/s by
# blkio throttle) whose queue has stable_writes=$STABLE, set before mkfs and mount (the
# flag is copied into the superblock at mount time); the device's bdi has strict_limit=1
# and max_bytes=$BDI_MAX_MB MiB, so background writeback runs all along on this device
# only (without it a 10 s run never starts writeback before its fsyncs do, and no write
# can meet a page under writeback); dbench $CLIENTS clients for $SECS s with Debian's
# client.txt load.  The four runs (stable 1 and 0, twice each) differ in
# nothing but stable_writes: same device size, throttle, mkfs, dbench arguments and events.
# Recorded like a user would: the whole writeback and block subsystems (filtered to this
# device), dbench's fsync/fdatasync/sync/syncfs/pwrite64; trace clock mono; v7 zstd,
# kallsyms hidden (capture/tc-record-small).
# Outside the trace: dbench's own report (throughput, per-operation count/avg/max latency:
# WriteX is the write(2) that may wait for a page under writeback, Flush is fsync), the
# stable_writes value read back, the loop device's stat, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}; STABLE=${STABLE:-1}
NAME=dbench-stable$STABLE-ext4-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
CLIENTS=${CLIENTS:-4}; SECS=${SECS:-10}; BDI_MAX_MB=${BDI_MAX_MB:-16}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-40}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G "$STABLE")
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.ext4 -q -F "$DEV"
mount "$DEV" "$MNT"
BDI=$(loop_bdi "$DEV"); DEVT=$(loop_kdev "$DEV")
M=$OUTDIR/measurements/$NAME
echo 1 > "/sys/class/bdi/$BDI/strict_limit"; echo $((BDI_MAX_MB * 1048576)) > "/sys/class/bdi/$BDI/max_bytes"
echo "strict_limit $(cat /sys/class/bdi/$BDI/strict_limit) max_bytes $(cat /sys/class/bdi/$BDI/max_bytes)" > "$M.bdi.txt"
cat "/sys/block/${DEV#/dev/}/queue/stable_writes" > "$M.stable_writes.txt"
log "device $DEV bdi $BDI devt $DEVT stable_writes=$(cat "$M.stable_writes.txt")"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "dbench"' \
  "sync syncfs fsync fdatasync pwrite64" -- writeback block)
save_args "$NAME" "${ARGS[@]}"
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
echo "before \$(cat /sys/block/${DEV#/dev/}/stat)" > "$M.loop-stat.txt"
cd "$MNT"
dbench -D "$MNT" -t $SECS -c /usr/share/dbench/client.txt $CLIENTS > "$M.dbench.txt" 2>&1
echo "after \$(cat /sys/block/${DEV#/dev/}/stat)" >> "$M.loop-stat.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
"$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
after_record "$NAME" "$OUTDIR/$NAME.dat"
tail -22 "$M.dbench.txt" >&2
