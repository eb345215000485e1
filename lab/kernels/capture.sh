#!/bin/bash
# Record one lab workload on one lab kernel, in the throw-away VM of shared/lab/vm-run.
#
#   lab/kernels/capture.sh RULE_ID stock|revert RUN [WORKLOAD ARGS...]
#
# Boots $KBUILD_ROOT/images/stock/bzImage or images/revert-RULE_ID/bzImage (build them
# with lab/kernels/build.sh), runs workloads/RULE_ID.vm.sh inside, and copies
#   sample_traces/lab-RULE_ID-VARIANT-runRUN-v7-zstd.dat
#   sample_traces/measurements/lab-RULE_ID-VARIANT-runRUN-v7-zstd.*   (timings, fio JSON, ...)
# plus the kernel's build.txt (release, patch and image sha256) as .kernel-build.txt.
# Emulated CPU: a run can hang (one always-wait stable-pages kernel hung inside
# trace-cmd record twice, then ran cleanly), so every VM run is limited to VM_TIMEOUT s
# (default 600) and retried up to TRIES times (default 3); every attempt is logged in
# .attempts.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
rule=$1; side=$2; run=$3; shift 3
root=${KBUILD_ROOT:-$here/build}
case $side in
  stock) image=$root/images/stock ;;
  revert) image=$root/images/revert-$rule ;;
  *) echo "capture.sh: VARIANT must be stock or revert, not $side" >&2; exit 2 ;;
esac
script=$here/workloads/$rule.vm.sh
[ -x "$script" ] || { echo "capture.sh: no workload $script" >&2; exit 2; }
[ -f "$image/bzImage" ] || { echo "capture.sh: no kernel $image/bzImage (run lab/kernels/build.sh)" >&2; exit 2; }
# the VM's root is the host's, read-only: the workloads' tools must be installed here
need=()
for p in fio btrfs-progs xfsprogs e2fsprogs trace-cmd; do
  dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "capture.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${need[@]}" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; }
fi
samples=$(cd "$here/../../sample_traces" && pwd)
name=lab-$rule-$side-run$run-v7-zstd
source "$samples/capture/blk-lib.sh"   # vm_capture
work=/tmp/wa-lab/$name; mkdir -p "$work"
attempts=$samples/measurements/$name.attempts.txt; : > "$attempts"
export KERNEL=$image/bzImage VM_TIMEOUT=${VM_TIMEOUT:-600}
for try in $(seq "${TRIES:-3}"); do
  t0=$(date +%s)
  if vm_capture "$name" "$script" "$work/vmout" 2G 2G "$name" "$@"; then
    echo "attempt $try: ok in $(( $(date +%s) - t0 )) s" >> "$attempts"; ok=1; break
  fi
  echo "attempt $try: failed after $(( $(date +%s) - t0 )) s (VM_TIMEOUT $VM_TIMEOUT): $(tail -n 1 "$work/vmout/vm-run.console.txt" 2>/dev/null)" >> "$attempts"
  cp "$work/vmout/log.txt" "$work/failed-$try.log.txt" 2>/dev/null || true
  ok=0
done
[ "$ok" = 1 ] || { echo "capture.sh: $name failed ${TRIES:-3} times; logs in $work" >&2; exit 1; }
v=$work/vmout
mv "$v/$name.dat" "$samples/"
for f in "$v/$name".*; do cp "$f" "$samples/measurements/"; done
cp "$v/vm-run.epoch.txt" "$samples/measurements/$name.vm-run-epoch.txt"
cp "$image/build.txt" "$samples/measurements/$name.kernel-build.txt"
ls -l "$samples/$name.dat" >&2
