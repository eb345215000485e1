"""Every hostile input of cases.py through `advisor ingest`, in a
subprocess as users run it: the exit code, a single-line error naming the
file and where (offset or line), no traceback, the intact part kept (or
nothing) — and the peak memory of the whole ingest process (Python, DuckDB
and the parser threads) under 256 MiB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.hostile.cases import CASES, Case

PEAK_LIMIT_MIB = 256
README = Path(__file__).with_name("README.md")


#: Runs the CLI and, on the way out, writes the process's own peak RSS
#: (VmHWM, kB) to a file. Not wait4's ru_maxrss: Linux carries the parent's
#: peak over fork and exec into the child's, so a child of a big pytest
#: process would report pytest's size.
WRAPPER = """
import atexit, sys
out = sys.argv.pop(1)
def report():
    with open("/proc/self/status") as f:
        hwm = next(l for l in f if l.startswith("VmHWM:")).split()[1]
    with open(out, "w") as f:
        f.write(hwm)
atexit.register(report)
sys.argv[0] = "advisor"
from advisor.cli.main import main
main()
"""


def ingest_measured(args: list[str], cwd: Path) -> tuple[int, str, str, float]:
    """Run `advisor ingest ARGS`; (exit code, stdout, stderr, peak RSS in MiB)."""
    stdin = None
    if args and args[-1].startswith("<"):
        stdin = open(args.pop()[1:], "rb")
    out, err, hwm = cwd / "stdout", cwd / "stderr", cwd / "peak_kb"
    hwm.unlink(missing_ok=True)
    with open(out, "wb") as o, open(err, "wb") as e:
        try:
            p = subprocess.run(
                [sys.executable, "-c", WRAPPER, str(hwm), "ingest", *args],
                stdin=stdin or subprocess.DEVNULL,
                stdout=o,
                stderr=e,
                env={**os.environ, "COLUMNS": "200"},
                cwd=cwd,
                timeout=300,
            )
        finally:
            if stdin:
                stdin.close()
    return p.returncode, out.read_text(), err.read_text(), int(hwm.read_text()) / 1024


def store_arg(args: list[str], tmp: Path) -> tuple[list[str], Path]:
    if "-o" in args:
        return args, Path(args[args.index("-o") + 1])
    store = tmp / "hostile.duckdb"
    return [*args, "-o", str(store)], store


@pytest.fixture(scope="module")
def baseline_mib(tmp_path_factory) -> float:
    """Peak RSS of a clean ingest of a small sample: Python, DuckDB, Arrow."""
    tmp = tmp_path_factory.mktemp("baseline")
    code, _, err, peak = ingest_measured([str(SAMPLES / "lost-events-v7-zstd.dat"), "-o", str(tmp / "s.duckdb")], tmp)
    assert code == 0, err
    return peak


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case: Case, tmp_path, baseline_mib):
    work = tmp_path / "in"
    work.mkdir()
    args, store = store_arg(case.build(work), tmp_path)
    code, out, err, peak = ingest_measured(args, tmp_path)
    print(f"{case.id}: exit {code}, peak {peak:.0f} MiB (baseline {baseline_mib:.0f} MiB)")
    assert "Traceback" not in err and "panicked" not in err, err
    assert code == case.expect, err
    assert peak < PEAK_LIMIT_MIB, f"peak RSS {peak:.0f} MiB"
    if case.expect == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("advisor: error:")]
        # One error line, the last; a partial ingest prints its summary first.
        assert len(errors) == 1 and lines[-1] == errors[0], err
        assert case.kept or len(lines) == 1, err
        line = errors[0]
        named = Path(args[0]).name if args[0] != "-" else "stdin"
        assert named in line, line
        assert re.search(r"offset 0x[0-9a-f]+|line \d+", line), line
        assert case.says in line or case.says in _stats_text(store), (case.says, line)
    if case.kept:
        with duckdb.connect(str(store), read_only=True) as con:
            info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
            errors = con.execute("SELECT sum(count) FROM parse_stats WHERE severity = 'error'").fetchone()[0]
            rows = con.execute(
                "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM blk_events)"
                if "blk_events" in _tables(con)
                else "SELECT count(*) FROM events"
            ).fetchone()[0]
        assert info["partial"] == "true" and errors > 0 and rows > 0, (info.get("partial"), errors, rows)
    elif case.expect == 2:
        assert not store.exists(), "a store for an unreadable file"
    if case.expect == 0:
        with duckdb.connect(str(store), read_only=True) as con:
            loss = con.execute("SELECT sum(count) FROM parse_stats WHERE severity = 'data_loss'").fetchone()[0]
        assert loss and loss > 0


def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def _stats_text(store: Path) -> str:
    if not store.exists():
        return ""
    with duckdb.connect(str(store), read_only=True) as con:
        return " ".join(f"{n}={c}" for n, c in con.execute("SELECT name, count FROM parse_stats WHERE count > 0").fetchall())


def test_readme_table_lists_every_case():
    rows = re.findall(r"^\| `([^`]+)` \|", README.read_text(), re.M)
    assert sorted(rows) == sorted(c.id for c in CASES)
    assert len(CASES) >= 25
