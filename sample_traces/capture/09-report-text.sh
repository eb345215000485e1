#!/bin/bash
# Capture 9: trace-cmd report text of a binary sample.
# fio-ext4-v7-zstd.dat would give ~33 MB of text, so the small tracefs-ext4.dat is used
# (which makes report text, tracefs text and trace.dat all views of one ring buffer).
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
SRC=${SRC:-tracefs-ext4}
cd "$OUTDIR"
trace-cmd report -i "$SRC.dat" > "$SRC.report.txt"
trace-cmd report -t -R -i "$SRC.dat" > "$SRC.report-raw.txt"
ls -l "$SRC.report.txt" "$SRC.report-raw.txt" >&2
