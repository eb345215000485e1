#!/bin/bash
# Record a large real blktrace capture for the ingest benchmark: small random O_DIRECT
# reads against a null_blk device, so the per-CPU blktrace files hold millions of
# ordinary Q/G/D/C (+P/U) records.
#
#   benchmarks/capture_blktrace_big.sh OUTDIR
#
# The host kernel refuses blktrace (lockdown), so this runs inside the throw-away VM of
# ../shared/lab/vm-run (Debian's 6.1 kernel, emulated, 2 vCPUs, 2 GiB; override with
# VM_RUN=).  Inside the VM: `modprobe null_blk gb=4 bs=4096 irqmode=0 queue_mode=2`,
# blktrace on /dev/nullb0 (large relay buffers, -b 4096 -n 8) writing to an ext4 on the
# scratch disk (blktrace needs mmap, which the shared folder lacks), fio 4k randread,
# libaio, iodepth 16, NUMBER_IOS I/Os (default 600000, 4 records each: Q G D C).  OUTDIR
# receives:
#   big.blktrace.0, big.blktrace.1   the per-CPU files (blkparse -i big -D OUTDIR)
#   big.blktrace.out.txt             blktrace's own per-CPU summary (events, dropped)
#   big.blkparse-summary.txt         blkparse's summary (`blkparse -i big -D OUTDIR | tail`,
#                                    run on the host afterwards: reading files needs no
#                                    kernel support; blkparse prints its summary to the
#                                    text output, so `-o /dev/null` would hide it)
#   big.fio.json, big.info.txt       fio output; kernel, tool versions, queue settings
#   vm-run.seconds.txt               wall time of the whole vm-run (boot included)
# OUTDIR is meant to be benchmarks/data/blktrace-big/ (git-ignored).  Root.
set -euo pipefail
if [ "${1:-}" = --in-vm ]; then
  # ------------------------------------------------------------ inside the VM
  out=$2; ios=$3
  exec > "$out/vm-log.txt" 2>&1
  set -x
  mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
  disk=$(lsblk -b -dn -o NAME,SIZE,TYPE | awk '$3 == "disk" && $2 == 2147483648 {print "/dev/" $1; exit}')
  mkfs.ext4 -q -F "$disk"
  mkdir -p /tmp/bigbt; mount "$disk" /tmp/bigbt
  modprobe null_blk gb=4 bs=4096 irqmode=0 queue_mode=2
  for i in $(seq 50); do [ -b /dev/nullb0 ] && break; sleep 0.1; done
  { uname -a; blktrace -V; blkparse -V; fio --version
    echo "modprobe null_blk gb=4 bs=4096 irqmode=0 queue_mode=2"
    for f in scheduler nr_requests max_sectors_kb logical_block_size rotational; do
      echo "nullb0 $f=$(cat /sys/block/nullb0/queue/$f)"; done; } > "$out/big.info.txt"
  cd /tmp/bigbt
  blktrace -d /dev/nullb0 -o big -D /tmp/bigbt -b 4096 -n 8 > blktrace.out 2>&1 &
  bt=$!
  for i in $(seq 100); do [ -e /sys/kernel/debug/block/nullb0/trace0 ] && break; sleep 0.1; done
  sleep 1
  t0=$(date +%s.%N)
  fio --name=big --filename=/dev/nullb0 --direct=1 --ioengine=libaio --iodepth=16 \
    --rw=randread --bs=4k --number_ios="$ios" --size=4g --randrepeat=0 \
    --output-format=json --output="$out/big.fio.json"
  t1=$(date +%s.%N)
  sleep 1
  kill -INT "$bt"; wait "$bt" || true
  echo "fio wall seconds: $(echo "$t1 - $t0" | bc)" >> "$out/big.info.txt"
  cp blktrace.out "$out/big.blktrace.out.txt"
  ls -l /tmp/bigbt >> "$out/big.info.txt"
  cp big.blktrace.* "$out/"
  cd /; umount /tmp/bigbt
  touch "$out/DONE"
  exit 0
fi
# ---------------------------------------------------------------- on the host
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
ios=${NUMBER_IOS:-600000}
VM_RUN=${VM_RUN:-$(dirname "$(readlink -f "$0")")/../../shared/lab/vm-run}
[ -x "$VM_RUN" ] || VM_RUN=/work/shared/lab/vm-run
mkdir -p "$out"; rm -f "$out"/big.* "$out/DONE" "$out/vm-log.txt"
launcher=$(mktemp /tmp/blktrace-big-launch.XXXXXX)
trap 'rm -f "$launcher"' EXIT
printf '#!/bin/bash\nexec bash %q --in-vm %q %q\n' "$(readlink -f "$0")" "$out" "$ios" > "$launcher"
chmod +x "$launcher"
t0=$(date +%s.%N)
"$VM_RUN" "$launcher" "$out" 2G > "$out/vm-run.console.txt" 2>&1
t1=$(date +%s.%N)
echo "$t1 - $t0" | bc > "$out/vm-run.seconds.txt"
[ -f "$out/DONE" ] || { echo "VM run failed; see $out/vm-log.txt" >&2; exit 1; }
blkparse -i big -D "$out" | tail -n 25 > "$out/big.blkparse-summary.txt"
ls -l "$out" >&2
cat "$out/big.blktrace.out.txt" "$out/big.blkparse-summary.txt" >&2
echo "vm-run wall seconds: $(cat "$out/vm-run.seconds.txt")" >&2
