#!/bin/bash
# Record the real captures of benchmarks/real_captures.py, the way users record: the
# generic event set, unfiltered (the whole writeback subsystem, block_rq_insert/issue/
# complete and block_bio_queue, sched_switch and sched_wakeup, the sync, fsync and
# fdatasync syscalls), v7 zstd, trace-cmd's default clock, while fio writes to a loop
# device.
#
#   benchmarks/capture_real.sh SIZE [OUTDIR]      SIZE: 1m, 4m, 17m or 30m
#
# SIZE picks the file system and the run time (the file is named after them,
# real-FS-SECONDSs-v7-zstd.dat); the event counts are what this 2-core machine produced,
# and they vary from run to run with the machine's load (sched_switch/sched_wakeup are
# recorded for every process, and fio's rate varies): the count of each capture is in
# benchmarks/results/real_captures.json.  Recorded here:
#   1m   ext4,  3 s  -> 1.11 M events,  9.1 MB
#   4m   xfs,  12 s  -> 3.80 M events, 28.8 MB
#   17m  ext4, 29 s  -> 8.55 M events, 58.9 MB (aimed at 17 M from the 52 s run below)
#   30m  ext4, 52 s  -> 30.7 M events, 205 MB (aimed at 17 M from a 4 s trial)
#   SECONDS_OVERRIDE=40 ... 17m -> real-ext4-40s, 10.7 M events, 70 MB
# (those on an AMD EPYC, 2 cores; on an Intel Xeon, 2 cores, 2026-11-26/27: 1m 1.60 M
# events, 11.0 MB; 4m 7.51 M, 52.7 MB; 17m 21.0 M, 142 MB)
# (the 3 s capture: 24 event types, block 54% (of the loop device and of the host disk
# under it), writeback 32%, sched 14%, syscalls 0.2%)
# The workload (fio 3.33): two writers doing buffered 4 KiB random writes into their own
# 256 MiB file, one calling fsync every 32 writes, the other fdatasync every 64, and a
# `sync` every 5 s; the loop device is a 2 GiB file on the host disk with direct I/O (as
# sample_traces/capture/lib.sh sets it up).  OUTDIR (default benchmarks/data, git-ignored)
# receives the .dat and, next to it, .record.txt (the exact command, the
# kernel, trace-cmd and fio versions, the load before recording) and .stat.txt
# (trace-cmd report --stat: per-CPU overruns, i.e. lost events).
# Set TC_RECORD to the recording command (default /work/shared/lab/tc-record, trace-cmd
# record on a locked-down host).  Root.  Takes /tmp/wa-heavy.lock while recording.
set -euo pipefail
size=${1:?usage: capture_real.sh 1m|4m|17m|30m [OUTDIR]}
here=$(dirname "$(readlink -f "$0")")
outdir=${2:-$here/data}
TC_RECORD=${TC_RECORD:-/work/shared/lab/tc-record}  # as sample_traces/capture/lib.sh
case $size in
  1m) fs=ext4; secs=3 ;;
  4m) fs=xfs; secs=12 ;;
  17m) fs=ext4; secs=29 ;;
  30m) fs=ext4; secs=52 ;;
  *) echo "capture_real.sh: SIZE must be 1m, 4m, 17m or 30m, not '$size'" >&2; exit 2 ;;
esac
secs=${SECONDS_OVERRIDE:-$secs}  # for a quick trial run
mkdir -p "$outdir"
out=$outdir/real-$fs-${secs}s-v7-zstd.dat
work=$(mktemp -d /var/tmp/advisor-real.XXXXXX)
mnt=$work/mnt; img=$work/disk.img
mkdir -p "$mnt"
truncate -s 2G "$img"
dev=$(losetup -f --show --direct-io=on "$img")
cleanup() {
  mountpoint -q "$mnt" && umount "$mnt"
  losetup -d "$dev" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
case $fs in
  ext4) mkfs.ext4 -q -F "$dev" ;;
  xfs) mkfs.xfs -q -f "$dev" ;;
esac
mount "$dev" "$mnt"
cat > "$work/workload.sh" <<EOF
#!/bin/bash
( while sleep 5; do sync; done ) &
syncer=\$!
fio --output=/dev/null --directory=$mnt --rw=randwrite --bs=4k --size=256m --ioengine=psync \\
  --time_based --runtime=$secs --randrepeat=0 \\
  --name=fsync-writer --fsync=32 --name=fdatasync-writer --fdatasync=64
kill \$syncer
EOF
chmod +x "$work/workload.sh"
args=(-q -b 65536 --file-version 7 --compression zstd -o "$out"
  -e writeback
  -e block:block_rq_insert -e block:block_rq_issue -e block:block_rq_complete -e block:block_bio_queue
  -e sched:sched_switch -e sched:sched_wakeup
  -e syscalls:sys_enter_sync -e syscalls:sys_exit_sync
  -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync
  -e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync)
sync
{
  echo "date $(date -u -Is)"
  echo "command $TC_RECORD ${args[*]} $work/workload.sh"
  cat "$work/workload.sh"
  echo "uname $(uname -r)"
  echo "trace-cmd $(trace-cmd --version 2>&1 | awk '/version/ {print $3; exit}')"
  echo "fio $(fio --version)"
  echo "loadavg before $(cat /proc/loadavg)"
} > "$out.record.txt"
flock /tmp/wa-heavy.lock "$TC_RECORD" "${args[@]}" "$work/workload.sh"
echo "loadavg after $(cat /proc/loadavg)" >> "$out.record.txt"
trace-cmd report --stat -i "$out" > "$out.stat.txt" 2>&1 || true
ls -l "$out" >&2
grep -E '^(overrun|dropped)' "$out.stat.txt" | sort | uniq -c >&2 || true
