"""The installed package (tests/packaging/run.sh): `pip install .` of a fresh clone into a
new venv, run from /. Its rules, models and parsers must all come from the wheel."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor

INSTALLED = os.environ.get("ADVISOR_INSTALLED")
pytestmark = pytest.mark.skipif(not INSTALLED, reason="needs the installed command: run tests/packaging/run.sh (make test-installed)")

PROBLEMS = {"btrfs-delalloc-overflush", "btrfs-full-fsync-fallback", "btrfs-snapshot-livelock", "stable-page-wait",
            "sync-flusher-stall"}


def test_runs_from_outside_the_source_tree():
    assert Path.cwd() == Path("/")
    venv = Path(INSTALLED).parent.parent
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import advisor, advisor.problems as p; "
                          "print(advisor.__file__); print(p.rule_file('stable-page-wait'))"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert all(str(venv) in line for line in out), out  # the package and its rule files, from site-packages


def test_analyze_gives_all_five_findings():
    r = advisor("analyze", str(SAMPLES / "snapshot-btrfs-v7-none.dat"), "--json")
    assert r.code == 0, r.err
    assert {f["rule"] for f in json.loads(r.out)["findings"]} == PROBLEMS


def test_no_generic_top_level_rules_directory():
    """The rules are inside the package, not a `rules/` directory other packages could fill."""
    venv = Path(INSTALLED).parent.parent
    assert not list(venv.glob("lib/python3*/site-packages/rules")), "the wheel installed a top-level rules/ directory"
    assert len(list(venv.glob("lib/python3*/site-packages/advisor/problems/*/rule.toml"))) == len(PROBLEMS)


@pytest.mark.parametrize("command", [
    ("replay", str(SAMPLES / "snapshot-btrfs-v7-none.dat"), "--json"),
    ("replay", "--workload", "fio-snapshot", "--json"),
    ("capture", "--for", "all", "--duration", "5"),
    ("sql", str(SAMPLES / "sync-xfs-v6.dat"), "select count(*) from sync_ops"),
    ("io", str(SAMPLES / "blk-ext4-fsync")),
])
def test_every_command_works(command):
    r = advisor(*command)
    assert r.code == 0, r.err


def test_report(tmp_path):
    out = tmp_path / "r.html"
    r = advisor("report", str(SAMPLES / "snapshot-btrfs-v7-none.dat"), "-o", str(out))
    assert r.code == 0, r.err
    assert "btrfs-snapshot-livelock" in out.read_text()
