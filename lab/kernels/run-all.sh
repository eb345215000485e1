#!/bin/bash
# Build every lab kernel and record every pair: stock and reverted, runs 1 and 2 of each
# workload in workloads/, then write their manifest entries.  About 10 minutes of
# builds after the first full one, and ~1 minute of VM time per capture.
#   lab/kernels/run-all.sh                      # everything
#   RULES="stable-page-wait" lab/kernels/run-all.sh
# Captures already in sample_traces/ are kept (delete a lab-*.dat to record it again).
# Heavy: run it under the machine's shared lock if it has one (flock LOCKFILE lab/kernels/run-all.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
samples=$here/../../sample_traces
rules=${RULES:-$(cd "$here/workloads" && ls *.vm.sh | grep -vx lib.vm.sh | sed 's/\.vm\.sh$//')}
"$here/build.sh" stock $(for r in $rules; do echo "revert-$r"; done)
for run in 1 2; do
  for r in $rules; do
    for side in stock revert; do
      [ -f "$samples/lab-$r-$side-run$run-v7-zstd.dat" ] && continue
      "$here/capture.sh" "$r" "$side" "$run"
    done
  done
done
"$samples/capture/lab_manifest.py"
