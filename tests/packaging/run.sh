#!/bin/bash
# The package as users install it: a fresh clone of this repository, `pip install .` into
# a new virtual environment, then the CLI tests run against that installed `advisor`
# from outside the source tree (cwd /), so nothing can come from the checkout.
#   tests/packaging/run.sh            (make test-installed)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/advisor-installed.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
python3 -m venv "$work/venv"
echo "installing a fresh clone into $work/venv (pip install .)" >&2
# The checkout's Rust build directory: the dependencies `make install` compiled (same
# profile and features) are reused, only the clone's crate is compiled again.
CARGO_TARGET_DIR="$repo/parsers/target" "$work/venv/bin/pip" install -q --progress-bar off "$work/clone"
cd /
ADVISOR_INSTALLED="$work/venv/bin/advisor" "$repo/.venv/bin/python" -m pytest -q -p no:cacheprovider \
  -n "${PYTEST_WORKERS:-2}" --dist loadfile \
  --rootdir "$repo" "$repo/tests/packaging" "$repo/tests/cli" "$@"
