#!/bin/bash
# Capture 5: dbench-btrfs-v7-zlib.dat = dbench-btrfs-v7-zstd.dat re-compressed with zlib.
# Debian's trace-cmd 3.1.6 only has zstd, so this needs a zlib-capable upstream
# trace-cmd built outside the repository (see README: trace-cmd 3.3.4, branch
# trace-cmd-stable-v3.3, with libtraceevent 1.8.4 and libtracefs 1.8.1, installed under
# /opt/tc-zlib).  Nothing is recorded: it is a pure format conversion of the same trace.
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"
TC_ZLIB_PREFIX=${TC_ZLIB_PREFIX:-/opt/tc-zlib}
export LD_LIBRARY_PATH=$TC_ZLIB_PREFIX/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TC=$TC_ZLIB_PREFIX/bin/trace-cmd
"$TC" list -c | grep -q zlib || { echo "$TC has no zlib support" >&2; exit 1; }
"$TC" convert --compression zlib -i "$OUTDIR/dbench-btrfs-v7-zstd.dat" -o "$OUTDIR/dbench-btrfs-v7-zlib.dat"
trace_summary "$OUTDIR/dbench-btrfs-v7-zlib.dat"
"$TC" dump --summary "$OUTDIR/dbench-btrfs-v7-zlib.dat" 2>/dev/null | grep -E 'Compression' >&2
