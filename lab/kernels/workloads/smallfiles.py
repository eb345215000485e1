#!/usr/bin/python3
# smallfiles: write COUNT files of SIZE bytes into DIR with plain buffered writes (no
# fsync), optionally pacing one file every PACE_MS milliseconds; stops early when
# STOP_FILE appears.  A stand-in for fs_mark -S 0 (not packaged in Debian 12).
#
#   smallfiles.py DIR PREFIX COUNT [SIZE=4096] [PACE_MS=0] [STOP_FILE]
#
# Prints "files=N seconds=S" at the end.  The shebang names the interpreter by absolute
# path so the task's comm is "smallfiles.py", which the capture's syscall filter matches.
import os
import sys
import time

d, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
pace = float(sys.argv[5]) / 1000 if len(sys.argv) > 5 else 0.0
stop = sys.argv[6] if len(sys.argv) > 6 else None
buf = b"w" * size
os.makedirs(d, exist_ok=True)
t0 = time.monotonic()
n = 0
for n in range(1, count + 1):
    fd = os.open(os.path.join(d, f"{prefix}{n:06d}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, buf)
    os.close(fd)
    if pace:
        time.sleep(pace)
    if stop and n % 16 == 0 and os.path.exists(stop):
        break
print(f"files={n} seconds={time.monotonic() - t0:.3f}")
