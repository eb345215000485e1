#!/bin/bash
# Runs inside shared/lab/vm-run (Debian's 6.1 kernel, 2 vCPUs, 2 GiB scratch disk /dev/vda),
# which starts its script without arguments: OUTDIR (vm-run's writable directory) is
# passed by a launcher, as blk-lib.sh's vm_capture writes it:
#   printf '#!/bin/bash\nexec bash %s %s\n' "$PWD/sample_traces/capture/26-blk-capture-run.vm.sh" OUTDIR > /tmp/launch.sh
#   chmod +x /tmp/launch.sh; shared/lab/vm-run /tmp/launch.sh OUTDIR
# Both layers recorded by `advisor capture --for all --device /dev/vda --run` itself (this
# checkout's advisor, run with the host's Python, visible read-only in the VM): trace-cmd
# (-C mono, the events every rule needs that this kernel has: btrfs is not loaded, so its
# events are skipped with a warning) and blktrace, started together by the one command.
# A small fsync workload runs while they record: it waits until trace-cmd has started its
# workload (`sleep 15`) and blktrace's debugfs files exist, then 6 x dd 2 MiB conv=fsync
# and sync.  The files are renamed when copied into sample_traces:
#   blk-capture-run.dat                      <- trace.dat (-o)
#   blk-capture-run.blktrace/vda.blktrace.N  -> blk-capture-run.blktrace.N
# blk-capture-run.blkparse.txt was made on the host with the same Debian 12 blkparse:
#   blkparse -i blk-capture-run > blk-capture-run.blkparse.txt
set -eux
OUT=${1:?usage: 26-blk-capture-run.vm.sh OUTDIR, the directory vm-run writes}
REPO=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
PY=${PY:-/work/main/.venv/bin/python}
NAME=blk-capture-run
BT=/tmp/bt
mkdir -p "$BT" /tmp/wa-mnt
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing
# blktrace writes its per-CPU files with mmap: a tmpfs, not the shared folder.
mountpoint -q "$BT" || mount -t tmpfs -o size=512m none "$BT"
mkfs.ext4 -q -F /dev/vda
mount /dev/vda /tmp/wa-mnt
uname -a > "$OUT/$NAME.uname.txt"
cat /sys/kernel/tracing/trace_clock > "$OUT/$NAME.trace_clock.txt"
ls /sys/kernel/tracing/events > "$OUT/$NAME.event-systems.txt"

cat > "$BT/workload.sh" <<'WL'
#!/bin/bash
# Start once both recorders run: trace-cmd has exec'd its `sleep 15`, blktrace has set up vda.
for i in $(seq 600); do
  pgrep -x -f 'sleep 15' > /dev/null && [ -e /sys/kernel/debug/block/vda/trace0 ] && break
  sleep 0.1
done
sleep 1
date +%s.%N > /tmp/bt/workload.epoch
for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/tmp/wa-mnt/f$i bs=64k count=32 conv=fsync 2>/dev/null; done
sync
date +%s.%N >> /tmp/bt/workload.epoch
WL
chmod +x "$BT/workload.sh"
"$BT/workload.sh" &
WL_PID=$!
cd "$BT"
rc=0
PYTHONPATH=$REPO PYTHONDONTWRITEBYTECODE=1 "$PY" -m advisor capture --for all --device /dev/vda --duration 15 \
  --buffer-kb 4096 -o "$BT/$NAME.dat" --run > "$OUT/$NAME.capture.stdout.txt" 2> "$OUT/$NAME.capture.stderr.txt" || rc=$?
echo "$rc" > "$OUT/$NAME.capture.rc.txt"
wait "$WL_PID" || true
cp "$BT/workload.epoch" "$OUT/$NAME.workload-epoch.txt" || true
ls -lR "$BT" > "$OUT/$NAME.files.txt"
cp "$BT/$NAME.dat" "$OUT/" || true
cp -r "$BT/$NAME.blktrace" "$OUT/" || true
umount /tmp/wa-mnt
touch "$OUT/DONE"
