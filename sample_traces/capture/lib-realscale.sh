# Helpers for the real-scale captures 18-24 (source after lib.sh; bash, root).
#
# These captures are recorded the way users record, not with the rules' own recipe:
# whole tracepoint subsystems (writeback, block, btrfs, vmscan where memory pressure
# matters) and a selection of syscalls, at real scale.  Two runs of every scenario:
# run 1 is for fitting and debugging, run 2 is held back as a test (manifest "role").
#
# The per-device events of the writeback and block subsystems are filtered in the kernel
# to the capture's own loop device (other jobs write to the host disk meanwhile); every
# other event of those subsystems, and every event of btrfs and vmscan, is recorded
# unfiltered.  The syscalls are filtered by the workload's comm.

# subsys_args SYSTEM BDI DEVT -> -e SYSTEM:EVENT [-f FILTER] for EVERY event of SYSTEM.
# An event with a bdi name field is filtered to BDI, one with a dev_t field to DEVT, any
# other event is recorded unfiltered.  (trace-cmd's `-e block -f 'dev == N'` would set the
# subsystem filter, which the kernel silently skips on events without that field, so each
# event gets its own filter here; the list saved in record-args.txt shows every one.)
subsys_args() {
  local sys=$1 bdi=$2 devt=$3 e fmt
  for e in "$TRACEFS/events/$sys"/*/; do
    e=$(basename "$e"); fmt="$TRACEFS/events/$sys/$e/format"
    if grep -q 'char name\[32\]' "$fmt"; then
      printf '%s\n' -e "$sys:$e" -f "name == \"$bdi\""
    elif grep -q 'char bdi\[32\]' "$fmt"; then
      printf '%s\n' -e "$sys:$e" -f "bdi == \"$bdi\""
    elif grep -qE 'dev_t dev;' "$fmt"; then
      printf '%s\n' -e "$sys:$e" -f "dev == $devt"
    else
      printf '%s\n' -e "$sys:$e"
    fi
  done
}

# user_event_args BDI DEVT COMM_FILTER SYSCALLS -- SYSTEM...
#   writeback and block: subsys_args (device-filtered); other systems: -e SYSTEM (whole);
#   each syscall NAME in SYSCALLS (space-separated): sys_enter_NAME/sys_exit_NAME, COMM_FILTER.
user_event_args() {
  local bdi=$1 devt=$2 filt=$3 calls=$4; shift 4
  [ "${1:-}" = -- ] && shift
  local s
  for s in "$@"; do
    case $s in
      writeback|block) subsys_args "$s" "$bdi" "$devt" ;;
      *) printf '%s\n' -e "$s" ;;
    esac
  done
  # shellcheck disable=SC2086
  sys_event_args "$filt" $calls
}

# host_state NAME: machine load and memory just before recording (measurements/NAME.host.txt)
host_state() {
  {
    echo "date $(date -Is)"
    echo "uptime $(uptime)"
    echo "loadavg $(cat /proc/loadavg)"
    grep -E 'MemTotal|MemAvailable|Dirty|Writeback:' /proc/meminfo
    sysctl vm.dirty_ratio vm.dirty_background_ratio vm.dirty_bytes vm.dirty_background_bytes \
      vm.dirty_expire_centisecs vm.dirty_writeback_centisecs
    echo "nproc $(nproc)"
  } > "$OUTDIR/measurements/$1.host.txt"
}

# tool_versions NAME: versions of the tools used (measurements/NAME.versions.txt)
tool_versions() {
  {
    echo "uname $(uname -r)"
    echo "trace-cmd $(trace-cmd --version 2>&1 | awk '/version/ {print $3; exit}')"
    local p
    for p in fio fsmark dbench btrfs-progs xfsprogs e2fsprogs tar; do
      echo "$p $(dpkg-query -W -f '${Version}' "$p" 2>/dev/null || echo -)"
    done
  } > "$OUTDIR/measurements/$1.versions.txt"
}

# loop_stat DEV -> the block device's /sys stat line (reads, sectors, writes, ...)
loop_stat() { cat "/sys/block/${1#/dev/}/stat"; }

# after_record NAME FILE: trace-cmd's own per-CPU statistics (overruns = lost events) and
# the short summary on stderr.
after_record() {
  local name=$1 f=$2
  trace-cmd report --stat -i "$f" > "$OUTDIR/measurements/$name.tc-stat.txt" 2>&1 || true
  trace_summary "$f"
  grep -E '^(CPU|overrun|entries|dropped)' "$OUTDIR/measurements/$name.tc-stat.txt" >&2 || true
}

# throttle_dev DEV WRITE_BPS: cap the loop device's writes (cgroup v1 blkio throttle in the
# root cgroup, where the flusher and loop workers run), so the fast host disk behind the
# loop file stands in for a slower one (WRITE_BPS 0 removes the cap).
# Example: throttle_dev /dev/loop0 41943040 -> "7:0 41943040" in blkio.throttle.write_bps_device
BLKIO_ROOT=/sys/fs/cgroup/blkio
throttle_dev() {
  local mm; mm=$(loop_bdi "$1")
  echo "$mm $2" > "$BLKIO_ROOT/blkio.throttle.write_bps_device"
}

# device_info NAME DEV: the loop device's setup (measurements/NAME.device.txt)
device_info() {
  local b=${2#/dev/} q=/sys/block/${2#/dev/}/queue
  {
    echo "loop $2 dev $(cat /sys/block/$b/dev) backing $(cat /sys/block/$b/loop/backing_file) dio $(cat /sys/block/$b/loop/dio)"
    echo "size_bytes $(( $(cat /sys/block/$b/size) * 512 ))"
    echo "blkio.throttle.write_bps_device $(grep "^$(cat /sys/block/$b/dev) " "$BLKIO_ROOT/blkio.throttle.write_bps_device" || echo none)"
    local f
    for f in scheduler stable_writes max_sectors_kb nr_requests logical_block_size rotational; do
      echo "queue/$f $(cat $q/$f)"
    done
  } > "$OUTDIR/measurements/$1.device.txt"
}

# tracefs_record TXT DAT BUFFER_KB WORKLOAD -- ARG...: record the way a user does by hand:
# enable the events of the trace-cmd style ARG list (-e SYSTEM[:EVENT] [-f FILTER]) by
# writing to tracefs, buffer_size_kb=BUFFER_KB per CPU (overwrite mode, the default: when
# the buffer fills, the oldest events go and `trace`'s header counts them), run WORKLOAD,
# then `cat trace` > TXT and `trace-cmd extract` of the same ring buffer > DAT (its
# defaults: v7 zstd;
# kallsyms hidden).  Options (clock, irq-info, record-tgid) stay at their defaults.
# The tracing state is put back as found (events off, filters cleared, buffer size).
tracefs_record() {
  local txt=$1 dat=$2 kb=$3 workload=$4; shift 4
  [ "${1:-}" = -- ] && shift
  local T=$TRACEFS old_buf old_on paths=() path="" a
  # buffer_size_kb reads "7 (expanded: 1408)" until a buffer was first allocated
  old_buf=$(awk '{print ($2 == "(expanded:") ? $3 + 0 : $1}' $T/buffer_size_kb); old_on=$(cat $T/tracing_on)
  [ -z "$(cat $T/set_event)" ] || { log "events already enabled in tracefs: $(head -3 $T/set_event)"; return 1; }
  echo 0 > $T/tracing_on
  echo "$kb" > $T/buffer_size_kb
  while [ $# -gt 0 ]; do
    a=$1; shift
    case $a in
      -e) path=$T/events/${1/://}; shift; echo 1 > "$path/enable"; paths+=("$path") ;;
      -f) echo "$1" > "$path/filter"; shift ;;
      *) log "tracefs_record: unexpected argument $a"; return 2 ;;
    esac
  done
  : > $T/trace
  echo 1 > $T/tracing_on
  "$workload"
  echo 0 > $T/tracing_on
  cat $T/trace > "$txt"
  (cd "$(dirname "$dat")" && "$TC_SMALL" extract -o "$dat") > "$dat.extract.log" 2>&1 \
    || { cat "$dat.extract.log" >&2; return 1; }
  rm -f "$dat.extract.log"
  for path in "${paths[@]}"; do echo 0 > "$path/enable"; echo 0 > "$path/filter"; done
  echo "$old_buf" > $T/buffer_size_kb; : > $T/trace; echo "$old_on" > $T/tracing_on
}

# timed_sync_lines M: the lines of a workload script that time `sync` from outside the
# trace, bash's `time` into M.sync-time.txt and a date pair into M.sync-epoch.txt, between
# its state() lines "before_sync" and "after_sync" in M.state.txt (captures 20, 38, 40-42).
timed_sync_lines() {
  local m=$1
  cat <<LINES
state before_sync >> "$m.state.txt"
TIMEFORMAT='%R'
t0=\$(date +%s.%N)
{ time sync ; } 2> "$m.sync-time.txt"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" > "$m.sync-epoch.txt"
state after_sync >> "$m.state.txt"
LINES
}

# loop_state_line DEV: the line of a workload script that defines state LABEL, which
# prints LABEL, the time, the host's Dirty/Writeback and DEV's stat (captures 40, 42, 44).
loop_state_line() {
  printf '%s\n' "state() { echo \"\$1 \$(date +%s.%N) \$(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\\n' ' ') loop_stat \$(cat /sys/block/${1#/dev/}/stat)\"; }"
}

# record_sync_workload NAME ARG...: record $WORK/workload.sh with trace-cmd arguments
# ARG... ($BUF KiB per CPU, v7, zstd, clock mono, kallsyms hidden), the machine's facts
# before ($DEV's among them) and trace-cmd's statistics after; then the sync's times and
# states on stderr.
record_sync_workload() {
  local name=$1; shift
  local M=$OUTDIR/measurements/$name
  chmod +x "$WORK/workload.sh"
  uname -a > "$M.uname.txt"; tool_versions "$name"; host_state "$name"; device_info "$name" "$DEV"
  "$TC_RECORD_SMALL" -q -b "$BUF" -C mono --file-version 7 --compression zstd -o "$OUTDIR/$name.dat" "$@" "$WORK/workload.sh"
  after_record "$name" "$OUTDIR/$name.dat"
  cat "$M.sync-time.txt" "$M.sync-epoch.txt" "$M.state.txt" >&2
}

# fsmark_sync_record NAME FILE_BYTES -- ARG...: the run of captures 20, 38 and 41, recorded
# with trace-cmd arguments ARG... (v7, zstd, clock mono, kallsyms hidden), with $WORK,
# $MNT (its fs_mark directory x), $DEV, $THREADS, $DIRS, $FILES, $LOOPS, $SYNC_AFTER and
# $BUF set: fs_mark creating FILE_BYTES files (-S 0: no fsync), and SYNC_AFTER s after it
# starts, `sync`. Outside the trace (measurements/NAME.*): the sync's `time` and date
# pair, used inodes, Dirty/Writeback and the loop device's stat at start, before and after
# the sync and at the end, fs_mark's report, and the record arguments.
fsmark_sync_record() {
  local name=$1 size=$2; shift 2
  [ "${1:-}" = -- ] && shift
  save_args "$name" "$@"
  local M=$OUTDIR/measurements/$name
  cat > "$WORK/workload.sh" <<WL
#!/bin/bash
state() {  # one line: label, used inodes, Dirty/Writeback kB, loop stat
  echo "\$1 \$(date +%s.%N) iused \$(df --output=iused "$MNT" | tail -1) \$(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ') loop_stat \$(cat /sys/block/${DEV#/dev/}/stat)"
}
state start > "$M.state.txt"
cd "$WORK"   # fs_mark writes fs_log.txt into the current directory
fs_mark -d "$MNT/x" -t $THREADS -D $DIRS -n $FILES -s $size -S 0 -L $LOOPS -k > "$M.fs_mark.txt" 2>&1 &
FSM=\$!
sleep $SYNC_AFTER
$(timed_sync_lines "$M")
wait \$FSM
state end >> "$M.state.txt"
WL
  record_sync_workload "$name" "$@"
  tail -8 "$M.fs_mark.txt" >&2
}
