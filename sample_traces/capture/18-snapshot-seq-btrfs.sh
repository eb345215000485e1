#!/bin/bash
# Capture 18: snapshot-seq-btrfs-run$RUN-v7-zstd.dat (RUN=1 fit, RUN=2 holdout)
#   (MODE=rand4: capture 19, snapshot-rand4-btrfs-run$RUN-v7-zstd.dat; see 19-*.sh)
# The snapshot-livelock seed's scenario at real scale: btrfs on a 4 GiB loop device
# (direct-io) whose writes are capped at $DEV_MBPS MiB/s (blkio throttle: the host disk
# behind the loop file writes ~1 GB/s, a 2 s snapshot would need ~2 GB dirty and
# ~10 M events), with a subvolume.  MODE=seq: one fio sequential buffered writer
# (libaio, iodepth 32, bs 4k, as in the seed's job) into the subvolume, rate-capped at
# $RATE so it is steady and below the device's speed.  MODE=rand4: the seed's second job,
# 4 random writers (randwrite, numjobs 4, same file), $RATE each.  After $SNAP_AFTER s
# (~100 MB dirty, far under the host's background threshold, so nothing was written back
# yet) a read-only snapshot of the subvolume by capture/snapshot-ioctl
# (BTRFS_IOC_SNAP_CREATE_V2 issued by that process, timed with CLOCK_MONOTONIC around the
# ioctl); fio goes on for $AFTER s more, then stops.
# Recorded like a user would: the whole writeback, block and btrfs subsystems (writeback
# and block events filtered to this device), the sync/fsync/ioctl syscalls of fio and
# snapshot-ioctl; trace clock mono; v7 zstd, kallsyms hidden (capture/tc-record-small).
# Outside the trace: the ioctl's own duration (snapshot-ioctl.json), `time` and date +%s.%N
# around it, Dirty/Writeback from /proc/meminfo just before it, fio's JSON, the loop
# device's stat before/after, the host's load.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"; source "$HERE/lib-realscale.sh"
RUN=${RUN:-1}; MODE=${MODE:-seq}
NAME=snapshot-$MODE-btrfs-run$RUN-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
SNAP_AFTER=${SNAP_AFTER:-6}; AFTER=${AFTER:-1}; BUF=${BUF:-40000}; DEV_MBPS=${DEV_MBPS:-40}
case $MODE in
  seq)   RATE=${RATE:-20m}; FIO_JOB="--rw=write --numjobs=1 --size=3G" ;;
  rand4) RATE=${RATE:-1m};  FIO_JOB="--rw=randwrite --numjobs=4 --size=1G --randrepeat=0" ;;
  *) echo "MODE seq or rand4" >&2; exit 2 ;;
esac
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'throttle_dev "$DEV" 0; cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
throttle_dev "$DEV" $((DEV_MBPS * 1048576))
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
btrfs subvolume create "$MNT/sub" >/dev/null
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(user_event_args "$BDI" "$DEVT" 'comm == "fio" || comm == "snapshot-ioctl"' \
  "sync syncfs fsync fdatasync ioctl" -- writeback block btrfs)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
echo "before \$(cat /sys/block/${DEV#/dev/}/stat)" > "$M.loop-stat.txt"
fio --name=job1 --filename="$MNT/sub/testfile" --ioengine=libaio --iodepth=32 --bs=4k \
  $FIO_JOB --direct=0 --thread=1 --rate=$RATE --time_based \
  --runtime=120 --group_reporting --output-format=json --output="$M.fio.json" &
FIO=\$!
sleep $SNAP_AFTER
grep -E '^(Dirty|Writeback):' /proc/meminfo > "$M.meminfo-at-snapshot.txt"
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time "$HERE/snapshot-ioctl" "$MNT/sub" "$MNT/snap" "$M.snapshot-ioctl.json" ; } 2> "$M.snapshot-time.txt"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.snapshot-epoch.txt"
sleep $AFTER
kill -INT \$FIO; wait \$FIO || true
echo "after \$(cat /sys/block/${DEV#/dev/}/stat)" >> "$M.loop-stat.txt"
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"; tool_versions "$NAME"; host_state "$NAME"; device_info "$NAME" "$DEV"
rm -f "$M.snapshot-ioctl.json"
"$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
after_record "$NAME" "$OUTDIR/$NAME.dat"
cat "$M.snapshot-time.txt" "$M.snapshot-epoch.txt" "$M.snapshot-ioctl.json" "$M.meminfo-at-snapshot.txt" >&2
