"""Every command starts the CLI: it must not load the replay engine's numba/LLVM (~60 MB
and half a second) unless it replays. The hostile-input tests' 256 MiB ingest budget
and the ingest benchmarks depend on it."""

from __future__ import annotations

import subprocess
import sys


def test_cli_start_does_not_load_numba():
    code = "import sys, advisor.cli.main; print(sorted(m for m in ('numba', 'llvmlite') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
