#!/bin/bash
# Capture 7: lost-events-v7-zstd.dat -- events lost ON PURPOSE.
# A 64 KiB per-CPU ring buffer (-b 64) and a very busy, unfiltered event set
# (raw_syscalls:sys_enter, raw_syscalls:sys_exit, sched:sched_switch) while a
# `find /usr` loop runs for ~0.4 s, held to 30% of a CPU by a cgroup-v1 CPU quota so
# the event rate (and the file size) is steady.  To make the loss certain (a busy
# machine alone did not reliably overrun: trace-cmd often kept up), the workload stops
# trace-cmd's per-CPU reader processes with SIGSTOP three times for 100 ms (a reader
# that is not scheduled, as on an overloaded host).  The writer overwrites unread pages, and the
# trace contains missed-event markers ("CPU:N [N EVENTS DROPPED]" in trace-cmd report).
# v7 zstd, kallsyms hidden (capture/tc-record-small) to stay well under 2 MB.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
NAME=lost-events-v7-zstd
WORK=${WORK:-/tmp/wa-capture/$NAME}
mkdir -p "$WORK"
tracing_busy && exit 1
CG=/sys/fs/cgroup/cpu/wa-capture-lost
mkdir -p "$CG"; echo 10000 > "$CG/cpu.cfs_period_us"; echo 3000 > "$CG/cpu.cfs_quota_us"
trap 'rm_cgroup "$CG"' EXIT
uname -a > "$OUTDIR/measurements/$NAME.uname.txt"
export CG   # the workload inherits it through trace-cmd
cat > "$WORK/workload.sh" <<'WL'
#!/bin/bash
# our parent is the main trace-cmd; its other trace-cmd children are the per-CPU readers
READERS=$(pgrep -P "$PPID" -x trace-cmd | tr '\n' ' ')
echo "readers: $READERS" >&2
(echo $BASHPID > "$CG/cgroup.procs"; while :; do find /usr >/dev/null; done) &
LOOP=$!
for i in 1 2 3; do
  sleep 0.03
  kill -STOP $READERS; sleep 0.1; kill -CONT $READERS
done
sleep 0.03
kill $LOOP; pkill -P $LOOP -x find || true   # the loop, then its running find
wait 2>/dev/null || true
WL
chmod +x "$WORK/workload.sh"
ARGS=(-e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -e sched:sched_switch)
save_args "$NAME" "${ARGS[@]}"
"$TC_RECORD_SMALL" -q -b 64 -o "$OUTDIR/$NAME.dat" "${ARGS[@]}" "$WORK/workload.sh"
trace_summary "$OUTDIR/$NAME.dat"
