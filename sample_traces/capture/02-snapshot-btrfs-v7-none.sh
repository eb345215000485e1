#!/bin/bash
# Capture 2: snapshot-btrfs-v7-none.dat
# btrfs on a 4 GiB loop device with a subvolume; fio sequential buffered writer into the
# subvolume (the snapshot-livelock seed's job, scaled down and rate-limited to 16 MB/s),
# after ~2 s a read-only snapshot made by capture/snapshot-ioctl (BTRFS_IOC_SNAP_CREATE_V2
# issued by that process itself; the task's comm is "snapshot-ioctl"), then stop.
# Uncompressed v7 with an empty kallsyms (capture/tc-record-small), so the file stays
# under 5 MB; trace clock `mono`, so event timestamps compare with CLOCK_MONOTONIC.
# Outside the trace: the ioctl's own duration (CLOCK_MONOTONIC/CLOCK_REALTIME read by
# snapshot-ioctl just before and after the ioctl, measurements/<name>.snapshot-ioctl.json),
# the command's wall time (date +%s.%N and bash `time` around it) and fio JSON.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=snapshot-btrfs-v7-none
WORK=${WORK:-/tmp/wa-capture/$NAME}; MNT=$WORK/mnt; IMG=$WORK/disk.img
RATE=${RATE:-16m}; SNAP_AFTER=${SNAP_AFTER:-2}
mkdir -p "$WORK" "$MNT"
tracing_busy && exit 1
DEV=$(setup_loop "$IMG" 4G)
trap 'cleanup_fs "$MNT" "$DEV" "$IMG"' EXIT
mkfs.btrfs -q -f "$DEV"
mount "$DEV" "$MNT"
btrfs subvolume create "$MNT/sub" >/dev/null
BDI=$(btrfs_bdi "$MNT"); DEVT=$(loop_kdev "$DEV")
log "device $DEV bdi $BDI devt $DEVT"
sync

mapfile -t ARGS < <(
  wb_event_args "$BDI" "$DEVT"
  blk_event_args "$DEVT" block_rq_issue block_rq_complete
  sys_event_args 'comm == "snapshot-ioctl"' ioctl
  ev_args btrfs:extent_writepage btrfs:btrfs_transaction_commit
)
save_args "$NAME" "${ARGS[@]}"
M=$OUTDIR/measurements/$NAME
cat > "$WORK/workload.sh" <<WL
#!/bin/bash
fio --name=job1 --filename="$MNT/sub/testfile" --ioengine=libaio --iodepth=32 --bs=4k \
  --rw=write --size=1G --direct=0 --thread=1 --numjobs=1 --rate=$RATE --time_based \
  --runtime=30 --group_reporting --output-format=json --output="$M.fio.json" &
FIO=\$!
sleep $SNAP_AFTER
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time "$CAPTURE_DIR/snapshot-ioctl" "$MNT/sub" "$MNT/snap" "$M.snapshot-ioctl.json" ; } 2> "$M.snapshot-time.txt"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > "$M.snapshot-epoch.txt"
sleep 0.5
kill -INT \$FIO; wait \$FIO || true
WL
chmod +x "$WORK/workload.sh"
uname -a > "$M.uname.txt"
rm -f "$M.snapshot-ioctl.json"
"$TC_RECORD_SMALL" -q -b 40000 -C mono --compression none -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
cat "$M.snapshot-time.txt" "$M.snapshot-epoch.txt" "$M.snapshot-ioctl.json" >&2
