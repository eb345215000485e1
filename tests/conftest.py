"""Shared fixtures: the real sample captures and their stores."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"


def manifest() -> list[dict]:
    return json.loads((SAMPLES / "manifest.json").read_text())


def samples(kind: str | None = None) -> list[dict]:
    return [m for m in manifest() if kind is None or m["kind"] == kind]


def sample_ids(kind: str | None = None) -> list[str]:
    return [m["file"] for m in samples(kind)]


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Keep the tests' cached stores out of the user's cache."""
    d = tmp_path_factory.mktemp("advisor-cache")
    old = os.environ.get("WRITEBACK_ADVISOR_CACHE")
    os.environ["WRITEBACK_ADVISOR_CACHE"] = str(d)
    yield d
    if old is None:
        os.environ.pop("WRITEBACK_ADVISOR_CACHE", None)
    else:
        os.environ["WRITEBACK_ADVISOR_CACHE"] = old


@pytest.fixture(scope="session")
def store_of(tmp_path_factory):
    """store_of("x.dat") → path of a store ingested once per session."""
    from advisor.store import ingest_trace

    d = tmp_path_factory.mktemp("stores")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            out = d / (name + ".duckdb")
            ingest_trace(SAMPLES / name, out)
            made[name] = out
        return made[name]

    return get


def need_trace_cmd():
    if not shutil.which("trace-cmd"):
        pytest.fail("trace-cmd is not installed: parity tests need it (apt-get install trace-cmd)")
