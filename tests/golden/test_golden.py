"""Golden tests: a query over real samples and the exact CSV it must give."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor

HERE = Path(__file__).parent
CASES = sorted(HERE.glob("*.sql"))


def _samples(sql: str) -> list[str]:
    for line in sql.splitlines():
        if line.startswith("-- sample:"):
            return line.split(":", 1)[1].split()
    raise AssertionError("golden query without '-- sample:' line")


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case, tmp_path):
    sql = case.read_text()
    samples = [str(SAMPLES / s) for s in _samples(sql)]
    target = samples[0]
    if len(samples) > 1:
        # The captures of one incident go into one store, as the README shows.
        target = str(tmp_path / "incident.duckdb")
        ingested = advisor("ingest", *samples, "-o", target)
        assert ingested.code == 0, ingested.err
    # Through stdin: a query starting with a -- comment would read as an option.
    r = advisor("sql", target, "--format", "csv", stdin=sql)
    assert r.code == 0, r.err
    assert r.out == case.with_suffix(".csv").read_text()
