"""Every command starts the CLI: it must not load the rules, the analysis, the replay
or the report (~90 ms of CPU together) unless the command uses them. The hostile-input
tests' 256 MiB ingest budget and the ingest benchmarks depend on it."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("matplotlib", "advisor.rules", "advisor.analyze", "advisor.replay", "advisor.report")


def test_cli_start_loads_only_what_every_command_needs():
    code = f"import sys, advisor.cli.main; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_commands_still_load_what_they_use():
    # The imports moved into the commands must resolve: run each cheap path once.
    from typer.testing import CliRunner

    from advisor.cli.main import app

    runner = CliRunner()
    assert runner.invoke(app, ["replay", "--list-workloads", "--json"]).exit_code == 0
    assert runner.invoke(app, ["capture", "--for", "sync-flusher-stall"]).exit_code == 0
    assert runner.invoke(app, ["--version"]).exit_code == 0


def test_commands_on_a_store_do_not_load_pyarrow_or_numpy(store_of):
    """pyarrow (with numpy: ~80 ms and ~55 MiB resident) is for writing a store; `sql`
    and `analyze` on one already written only read it through DuckDB. numpy alone (~60 ms)
    came back with any Python function registered in DuckDB: the SQL helpers are macros."""
    store = store_of("tracefs-ext4.dat")
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from advisor.cli.main import app\n"
        f"for args in (['sql', {str(store)!r}, 'SELECT count(*) FROM sync_ops'], ['analyze', {str(store)!r}, '--json']):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    assert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in ('pyarrow', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
