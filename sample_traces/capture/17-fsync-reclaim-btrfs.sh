#!/bin/bash
# Capture 17: fsync-reclaim-btrfs-v7-zstd.dat -- fsync-heavy fio on btrfs while a memory
# hog forces page reclaim (host wrapper).  The host's memory cgroup keeps reclaim from
# happening here, so the capture runs in the 2 GiB VM of shared/lab/vm-run (Debian's 6.1
# kernel, emulated); the in-VM part is 17-fsync-reclaim-btrfs.vm.sh.  This wrapper copies
# the trace into $OUTDIR and the outside-the-trace measurements (fio's JSON with its own
# fsync latency percentiles, the hog's meminfo/vmstat before and after) into
# $OUTDIR/measurements.
#   RUNTIME (s, default 20), RATE_IOPS (fio cap, default 200), FSYNC_EVERY (default 4)
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"
source "$HERE/blk-lib.sh"
NAME=fsync-reclaim-btrfs-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}; VMOUT=$WORK/vmout
mkdir -p "$WORK"
# keep the VM's own log next to the scratch for a look after a failed or odd run
trap 'cp "$VMOUT/log.txt" "/tmp/wa-capture/$NAME.vm-log.txt" 2>/dev/null; rm -rf "$WORK"' EXIT
vm_capture "$NAME" "$HERE/17-fsync-reclaim-btrfs.vm.sh" "$VMOUT" 2G 2G \
  "${RUNTIME:-20}" "${RATE_IOPS:-200}" "${FSYNC_EVERY:-4}"
cp "$VMOUT/$NAME.dat" "$OUTDIR/"
for f in versions.txt sysctl.txt record-args.txt tc-stat.txt fio.json workload.sh workload-epoch.txt \
         meminfo-before.txt meminfo-after.txt vmstat-before.txt vmstat-after.txt hog.txt reader.txt uname.txt; do
  cp "$VMOUT/$NAME.$f" "$OUTDIR/measurements/"
done
cp "$VMOUT/vm-run.epoch.txt" "$OUTDIR/measurements/$NAME.vm-run-epoch.txt"
ls -l "$OUTDIR/$NAME".* >&2
