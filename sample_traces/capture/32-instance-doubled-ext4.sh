#!/bin/bash
# Capture 32: instance-doubled-ext4-v7-zstd.dat
# Capture 28 with block_rq_issue and block_rq_complete enabled in the top buffer as well
# as in the instance "wa" (two tools tracing the same events, each in its own buffer).
# The kernel writes each such event to both buffers, so it appears twice in the file
# and in `trace-cmd report`.
exec env DOUBLED=1 "$(dirname "$(readlink -f "$0")")/28-instance-ext4.sh" "$@"
