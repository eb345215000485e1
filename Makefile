# Writeback Advisor: set-up, demo and tests.
#   make demo   install everything (apt packages, Python venv, Rust build) and run on samples
#   make test   the Rust and Python test suites (parity against the real trace-cmd, blkparse, btt),
#               then the CLI tests against the package installed from a fresh clone
#   make fuzz-short  each parser's fuzz target for 30 s, one at a time (nightly Rust, cargo-fuzz)
SHELL := /bin/bash
PY := .venv/bin/python
SAMPLE := sample_traces/fio-ext4-v7-zstd.dat
BLK_SAMPLE := sample_traces/blk-ext4-fsync
ANALYZE_SAMPLE := sample_traces/stable-pages-ext4-v7-zstd.dat
# chromium: the report's browser test opens the HTML file headless.
# openjdk-17-jre-headless: Spark (advisor fleet analyze --engine spark and its tests).
# python3-venv: `python3 -m venv` on Debian's own Python (a minimal install lacks ensurepip).
APT_PACKAGES := trace-cmd blktrace zstd chromium openjdk-17-jre-headless python3-venv
STAMP := .venv/.installed

.PHONY: install demo test test-rust test-python test-installed fuzz-short bench clean

$(STAMP): pyproject.toml parsers/Cargo.toml parsers/Cargo.lock $(shell find parsers/src -name '*.rs')
	@# "dpkg -s" succeeds for a removed package whose config files remain, so ask for "installed".
	@missing=""; for p in $(APT_PACKAGES); do \
	  [ "$$(dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null)" = installed ] || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "==> [1/3] Debian packages:$$missing (apt-get)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q $$missing || { apt-get update -q && apt-get install -y -q $$missing; }; \
	else echo "==> [1/3] Debian packages: already installed ($(APT_PACKAGES))"; fi
	@echo "==> [2/3] Python venv in .venv"
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	@echo "==> [3/3] the package and its Rust parsers (a cargo build: about 3 minutes on 2 cores; cargo's progress follows)"
	@# pip -v streams cargo's output; the whole log is kept, the progress lines are shown.
	@set -o pipefail; $(PY) -m pip install -v -e '.[test]' 2>&1 | tee .venv/pip-install.log \
	  | grep --line-buffered -E '^ *(Collecting|Compiling|Finished|Successfully installed)' \
	  || { echo "pip install failed; the end of .venv/pip-install.log:"; tail -40 .venv/pip-install.log; exit 1; }
	touch $(STAMP)

install: $(STAMP)

demo: install
	@echo "==> ingest: parse a capture into its cached store"
	.venv/bin/advisor ingest --limit 10 $(SAMPLE)
	@echo "==> sql: query the events"
	.venv/bin/advisor sql $(SAMPLE) "select event, count(*) as events from events group by 1 order by 2 desc limit 10"
	@echo "==> io: btt-style block I/O latency"
	.venv/bin/advisor io $(BLK_SAMPLE)
	@echo "==> analyze: which documented writeback problem the capture shows"
	.venv/bin/advisor analyze $(ANALYZE_SAMPLE)

test-rust:
	cargo test --quiet --manifest-path parsers/Cargo.toml

# Two pytest workers (pytest-xdist), one test file per worker at a time: a file's
# module-level caches stay in one process. The 25 slowest tests are listed at the end.
# tests/cli and tests/packaging run in test-installed, against the installed command
# (`pytest tests/cli` runs them on this checkout).
PYTEST_WORKERS ?= 2
test-python: install
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=25 --ignore=tests/cli --ignore=tests/packaging; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

# The package as users install it: pip install of a fresh clone into a new venv, the CLI
# tests run against that command from outside the source tree.
test-installed: install
	PYTEST_WORKERS=$(PYTEST_WORKERS) tests/packaging/run.sh

test: install test-rust test-python test-installed

# Skips with a message when nightly Rust is missing; installs cargo-fuzz if needed.
fuzz-short:
	parsers/fuzz/run.sh 30

bench: install
	$(PY) benchmarks/ingest_vs_trace_cmd.py
	$(PY) benchmarks/ingest_vs_blkparse.py
	$(PY) benchmarks/real_captures.py

clean:
	rm -rf .venv parsers/target parsers/fuzz/target parsers/fuzz/work parsers/fuzz/artifacts
