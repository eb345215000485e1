# Shared helpers for the blktrace captures 10-12 (source it; bash, root).
#
# Two halves:
#  - host side (vm_capture): run an in-VM script through shared/lab/vm-run and time it;
#  - VM side (everything else): run INSIDE the throw-away VM that vm-run boots (Debian's
#    stock 6.1 kernel, no lockdown), where blktrace's debugfs relay files work.
#
# Conventions inside the VM
#  - blktrace writes per-CPU files NAME.blktrace.N with mmap, which vm-run's shared
#    folder (9p) does not support, so every capture file is written to a tmpfs mounted
#    on $BT_DIR first and copied to the shared output directory at the end.
#  - The VM's root is the host's root, read-only (overlays on /etc, /tmp, /usr, ...),
#    so blktrace/blkparse/btt/trace-cmd/fio/dmsetup/mkfs are the host's Debian 12 binaries.
#  - The scratch disk is the virtio disk of the requested size (the VM has no other).

BLK_CAPTURE_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
VM_RUN=${VM_RUN:-/work/shared/lab/vm-run}
BT_DIR=${BT_DIR:-/tmp/bt}

blog() { echo "[$(date +%T.%N | cut -c1-12)] $*" >&2; }

# ---------------------------------------------------------------- host side
# vm_capture NAME VM_SCRIPT VMOUT DISK_SIZE [ARG...]
# Boots the VM with a one-line launcher that runs VM_SCRIPT VMOUT ARG...; records the
# wall time of the whole vm-run (boot included) in VMOUT/vm-run.epoch.txt.
vm_capture() {
  local name=$1 script=$2 vmout=$3 size=$4; shift 4
  rm -rf "$vmout"; mkdir -p "$vmout"
  local launcher; launcher=$(mktemp "/tmp/wa-vm-launch.$name.XXXXXX")
  { echo '#!/bin/bash'; printf 'exec bash %q %q' "$script" "$vmout"; printf ' %q' "$@"; echo; } > "$launcher"
  chmod +x "$launcher"
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  "$VM_RUN" "$launcher" "$vmout" "$size" > "$vmout/vm-run.console.txt" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  rm -f "$launcher"
  echo "$t0 $t1" > "$vmout/vm-run.epoch.txt"
  if [ "$rc" = 0 ] && [ ! -f "$vmout/DONE" ]; then rc=1; fi
  if [ "$rc" != 0 ]; then
    blog "vm-run failed (rc=$rc); console tail:"; tail -n 30 "$vmout/vm-run.console.txt" >&2
    [ -f "$vmout/log.txt" ] && tail -n 40 "$vmout/log.txt" >&2
    return 1
  fi
}

# ---------------------------------------------------------------- VM side
# vm_prepare VMOUT: log to VMOUT/log.txt, mount debugfs/tracefs if needed, tmpfs on $BT_DIR
vm_prepare() {
  local vmout=$1
  exec >> "$vmout/log.txt" 2>&1
  mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
  mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing
  mkdir -p "$BT_DIR"
  mountpoint -q "$BT_DIR" || mount -t tmpfs -o size=1200m none "$BT_DIR"
}

# find_disk SIZE_BYTES -> /dev/vdX (the blank scratch disk vm-run attached)
find_disk() {
  local want=$1 name size type
  while read -r name size type; do
    if [ "$type" = disk ] && [ "$size" = "$want" ]; then echo "/dev/$name"; return 0; fi
  done < <(lsblk -b -dn -o NAME,SIZE,TYPE)
  echo "no disk of $want bytes" >&2; lsblk -b >&2; return 1
}

# size_bytes 2G -> 2147483648 (the DISK_SIZE vm-run passes to truncate)
size_bytes() { numfmt --from=iec "$1"; }

# queue_settings /dev/X -> key=value lines (what the sample's README quotes)
queue_settings() {
  local b=${1#/dev/} f
  echo "device=/dev/$b dev=$(cat /sys/block/$b/dev) size_sectors=$(cat /sys/block/$b/size)"
  for f in scheduler max_sectors_kb max_hw_sectors_kb max_segments max_segment_size nr_requests \
           rotational logical_block_size physical_block_size read_ahead_kb wbt_lat_usec \
           write_cache nomerges add_random; do
    [ -r "/sys/block/$b/queue/$f" ] && echo "$f=$(cat /sys/block/$b/queue/$f)"
  done
  [ -d "/sys/block/$b/mq" ] && echo "hw_queues=$(ls /sys/block/$b/mq | wc -l)"
  return 0
}

# tool_versions -> the versions the README quotes
tool_versions() {
  echo "uname -r: $(uname -r)"
  echo "uname -a: $(uname -a)"
  echo "blktrace -V: $(blktrace -V 2>&1)"
  echo "blkparse -V: $(blkparse -V 2>&1)"
  echo "btt -V: $(btt -V 2>&1)"
  echo "trace-cmd: $(trace-cmd 2>&1 | grep -m1 version)"
  echo "fio: $(fio --version)"
  echo "dpkg blktrace: $(dpkg-query -W -f '${Version}' blktrace)"
  echo "nproc: $(nproc)"
  echo "MemTotal: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
}

# bt_start OUT_BASENAME_OR_EMPTY DEV... [-- BLKTRACE_OPTS...]
# Starts blktrace in the background in $BT_DIR (stdout/stderr -> $BT_DIR/blktrace.out),
# sets BT_PID, and waits until the kernel-side trace is running (debugfs files exist).
bt_start() {
  local base=$1; shift
  local devs=() opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do devs+=("$1"); shift; done
  [ "${1:-}" = -- ] && { shift; opts=("$@"); }
  local args=() d
  for d in "${devs[@]}"; do args+=(-d "$d"); done
  [ -n "$base" ] && args+=(-o "$base")
  ( cd "$BT_DIR" && exec blktrace "${args[@]}" -D "$BT_DIR" "${opts[@]}" ) > "$BT_DIR/blktrace.out" 2>&1 &
  BT_PID=$!
  BT_CMD="blktrace ${args[*]} -D $BT_DIR ${opts[*]}"
  local i
  for i in $(seq 100); do
    local ok=1
    for d in "${devs[@]}"; do
      [ -e "/sys/kernel/debug/block/$(basename "$(readlink -f "$d")")/trace0" ] || ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.1
  done
  sleep 1   # BLKTRACESTART follows the setup ioctl; give the reader threads time to start
  kill -0 "$BT_PID"
  blog "blktrace running (pid $BT_PID): $BT_CMD"
}

# bt_stop: SIGINT blktrace, wait for it to flush and print its per-CPU summary
bt_stop() {
  kill -INT "$BT_PID"
  wait "$BT_PID" || true
  cat "$BT_DIR/blktrace.out" >&2
}

# bt_derive NAME BASENAME... : in $BT_DIR, the default-format blkparse text (with its
# summary), the merged binary (-d NAME.bin -O) and btt's report of the merged binary.
bt_derive() {
  local name=$1; shift
  local ins=() b
  for b in "$@"; do ins+=(-i "$b"); done
  ( cd "$BT_DIR"
    blkparse "${ins[@]}" -D "$BT_DIR" > "$name.blkparse.txt"
    blkparse "${ins[@]}" -D "$BT_DIR" -d "$name.bin" -O > "$name.blkparse-dump.out" 2>&1
    mkdir -p btt-scratch && cd btt-scratch && btt -i "../$name.bin" > "../$name.btt.txt" 2> "../$name.btt.err" )
  blog "blkparse: $(grep -E '^(Events|Skips)' "$BT_DIR/$name.blkparse.txt" | tr '\n' ' ')"
}

# sysctl_dirty -> the writeback sysctls in force
sysctl_dirty() {
  local k
  for k in dirty_background_bytes dirty_background_ratio dirty_bytes dirty_ratio \
           dirty_expire_centisecs dirty_writeback_centisecs; do
    echo "vm.$k=$(cat /proc/sys/vm/$k)"
  done
}
