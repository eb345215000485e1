#!/bin/bash
# Capture 29: instance-ext4-v6.dat
# Capture 28 in file version 6 (`--file-version 6`, uncompressed): trace-cmd before 3.0
# wrote only this version, and a v6 BUFFER option holds just the name and the offset of
# the instance's CPU table (v7 lists its CPUs in the option itself).
exec env FILE_VERSION=6 "$(dirname "$(readlink -f "$0")")/28-instance-ext4.sh" "$@"
