"""An ingest that is killed (SIGKILL: no clean-up possible) or interrupted
(Ctrl-C) leaves no store that a later run reads as complete: the store is
written under a temporary name and renamed into place only when finished.
A re-run then gives the same store as an ingest that was never interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES

TRACE = SAMPLES / "sync-xfs-v6.dat"  # the largest sample: a few seconds of ingest
#: trace_info rows that differ between any two ingests.
VOLATILE = {"ingested_at", "parts_token"}  # the time, and the name of the parts directory


def start(store: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "advisor", "ingest", str(TRACE), "-o", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def wait_for_temp(store: Path, p: subprocess.Popen) -> Path:
    """The temporary store appears once parsing has begun."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        temps = list(store.parent.glob(f".{store.name}.*.tmp"))
        if temps and temps[0].stat().st_size > 0:
            return temps[0]
        assert p.poll() is None, "ingest finished before it could be interrupted"
        time.sleep(0.005)
    raise AssertionError("no temporary store appeared")


def contents(store: Path) -> dict[str, list]:
    """Every table and view of a store, rows sorted."""
    with duckdb.connect(str(store), read_only=True) as con:
        names = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2"
        ).fetchall()
        out = {}
        for schema, name in names:
            rows = con.execute(f'SELECT * FROM "{schema}"."{name}"').fetchall()
            if name == "trace_info":
                rows = [r for r in rows if r[0] not in VOLATILE]
            out[f"{schema}.{name}"] = sorted(rows, key=repr)
    return out


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, list]:
    store = tmp_path_factory.mktemp("clean") / "clean.duckdb"
    p = start(store)
    assert p.wait() == 0, p.stderr.read()
    return contents(store)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_interrupted_ingest_leaves_no_store_and_a_rerun_matches(tmp_path, clean, how):
    store = tmp_path / "incident.duckdb"
    p = start(store)
    temp = wait_for_temp(store, p)
    p.send_signal(how)
    code = p.wait()
    err = p.stderr.read().decode()
    assert code != 0
    assert not store.exists(), "an interrupted ingest left a store in place"
    assert "Traceback" not in err, err
    if how != signal.SIGKILL:
        # Ctrl-C and kill: the temporary store is removed on the way out.
        assert not temp.exists()
    # The re-run starts from scratch (removing what a killed run left) and
    # gives exactly the store of an uninterrupted run.
    p = start(store)
    assert p.wait() == 0, p.stderr.read()
    assert not list(tmp_path.glob(".incident.duckdb.*"))
    assert contents(store) == clean


def test_cached_store_is_only_the_finished_one(tmp_path):
    """The cache (no -o) uses the same rename: a killed first use leaves no
    cache entry, so the next command ingests again instead of reading half."""
    env = {"WRITEBACK_ADVISOR_CACHE": str(tmp_path)}
    p = subprocess.Popen(
        [sys.executable, "-m", "advisor", "ingest", str(TRACE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.005)
    p.kill()
    p.wait()
    assert not list(tmp_path.glob("*.duckdb"))
    r = subprocess.run([sys.executable, "-m", "advisor", "ingest", str(TRACE), "--json"], capture_output=True, env={**os.environ, **env})
    assert r.returncode == 0
    assert len(list(tmp_path.glob("*.duckdb"))) == 1
