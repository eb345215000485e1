"""The fleet tests' captures: 12 samples of every kind of capture the advisor reads and
a file that is not a capture, analyzed once per session by the local engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES
from tests.helpers import advisor

CAPTURES = [
    "fio-ext4-v7-zstd.dat", "snapshot-btrfs-v7-none.dat", "sync-xfs-v6.dat", "dbench-btrfs-v7-zstd.dat",
    "dbench-btrfs-v7-zlib.dat", "fsync-reclaim-btrfs-v7-zstd.dat", "hostile-names-ext4-v7-zstd.dat",
    "lost-events-v7-zstd.dat", "stable-pages-ext4-v7-zstd.dat", "untar-btrfs-v7-zstd.dat", "tracefs-ext4.dat",
    "blk-ext4-fsync.dat",
]
NOT_A_CAPTURE = "manifest.json"


def fleet(out: Path, *extra: str) -> dict:
    listfile = out.parent / f"{out.name}-captures.txt"
    listfile.write_text("# the fleet tests' captures\n" + "".join(f"{SAMPLES / c}\n" for c in CAPTURES))
    r = advisor("fleet", "analyze", f"@{listfile}", str(SAMPLES / NOT_A_CAPTURE), "-o", str(out), "--json", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.fixture(scope="session")
def local_fleet(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("fleet") / "local"
    return out / "findings", fleet(out)


def docs_query(table: Path) -> str:
    """The query docs/fleet.md shows, over this table."""
    text = (ROOT / "docs" / "fleet.md").read_text()
    sql = re.search(r"```sql\n(-- findings:.*?)```", text, re.S).group(1)
    assert "read_parquet('findings/findings/*.parquet')" in sql
    return sql.replace("findings/findings/*.parquet", f"{table}/*.parquet")
