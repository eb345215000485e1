#!/bin/bash
# Record the real-scale captures 18-24 (two runs of each scenario; four of dbench) under
# the shared lock (one lock hold per scenario, so its runs are recorded back to back and
# never overlap other heavy jobs), then add their entries to manifest.json.
#   capture/run-realscale.sh            # all
#   capture/run-realscale.sh 20 22      # only the scripts whose number is given
#   flock /tmp/wa-heavy.lock env LOCK_HELD=1 capture/run-realscale.sh   # one hold for all
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
LOCK=${LOCK:-/tmp/wa-heavy.lock}
SEL=("$@")
want() { [ ${#SEL[@]} -eq 0 ] && return 0; local n; for n in "${SEL[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
# scenario NUMBER "ENV... ./SCRIPT" ...: each argument after the number is one recording
scenario() {
  local n=$1; shift
  want "$n" || return 0
  local cmds="set -e" c
  for c in "$@"; do cmds+="; echo '=== $c' >&2; env $c; sleep 2"; done
  if [ "${LOCK_HELD:-0}" = 1 ]; then bash -c "$cmds"; else flock "$LOCK" bash -c "$cmds"; fi
}
scenario 18 "RUN=1 ./18-snapshot-seq-btrfs.sh" "RUN=2 ./18-snapshot-seq-btrfs.sh"
scenario 19 "RUN=1 ./19-snapshot-rand4-btrfs.sh" "RUN=2 ./19-snapshot-rand4-btrfs.sh"
scenario 20 "RUN=1 ./20-sync-fsmark-xfs.sh" "RUN=2 ./20-sync-fsmark-xfs.sh"
scenario 21 "RUN=1 ./21-fsync-memcg-btrfs.sh" "RUN=2 ./21-fsync-memcg-btrfs.sh"
scenario 22 "RUN=1 STABLE=1 ./22-dbench-stable-ext4.sh" "RUN=1 STABLE=0 ./22-dbench-stable-ext4.sh" \
            "RUN=2 STABLE=1 ./22-dbench-stable-ext4.sh" "RUN=2 STABLE=0 ./22-dbench-stable-ext4.sh"
scenario 23 "RUN=1 ./23-untar-full-btrfs.sh" "RUN=2 ./23-untar-full-btrfs.sh"
scenario 24 "RUN=3 ./24-fsync-memcg-btrfs-tracefs.sh"
./realscale_manifest.py
