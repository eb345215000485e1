#!/bin/bash
# Run fuzz targets one after another, one process each (never two at once:
# the machine has 2 cores; -jobs=N would also send the output to fuzz-N.log).
#   parsers/fuzz/run.sh SECONDS [TARGET...]     default: every target
# New inputs go to parsers/fuzz/work/<target>/ (not committed); the seeds in
# corpus/<target>/ are read only. Crashes land in parsers/fuzz/artifacts/<target>/.
# Limits: an input may not make the parser allocate more than 256 MiB at once
# or use more than 1 GiB in all (-malloc_limit_mb, -rss_limit_mb), nor run
# longer than 10 s (-timeout): each is reported as a crash. The text parsers
# bound every line (64 KiB), so they get 256 MiB in all; for them ASan's
# quarantine of freed memory (256 MiB by default, which alone would reach the
# limit after a few hundred inputs) is 16 MiB.
# Without nightly Rust or cargo-fuzz it says so and exits 0 (CI skips fuzzing).
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:?usage: run.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tracedat inflate event_format ftrace_text blktrace blkparse_text)
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzz: no nightly Rust toolchain; skipping the fuzz run (rustup toolchain install nightly)" >&2
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || { echo "fuzz: cannot install cargo-fuzz; skipping the fuzz run" >&2; exit 0; }
fi
cargo +nightly fuzz build -O >/dev/null 2>&1 || cargo +nightly fuzz build -O || exit 1
status=0
for t in "${targets[@]}"; do
  mkdir -p "work/$t" "artifacts/$t"
  log="artifacts/$t/last-run.log"
  case $t in ftrace_text | blkparse_text) rss=256 asan=quarantine_size_mb=16 ;; *) rss=1024 asan= ;; esac
  ASAN_OPTIONS="$asan" cargo +nightly fuzz run -O "$t" "work/$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb="$rss" -malloc_limit_mb=256 -timeout=10 \
    -max_len=1048576 -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  corpus=$(ls "work/$t" | wc -l)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  echo "fuzz $t: ${secs}s, rc=$rc, ${execs:-?} execs, ${rate:-?} exec/s, $cov, corpus $corpus files ($(du -sh "work/$t" | cut -f1))"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" | head -5
  fi
done
exit $status
