"""Golden tests: a query over a real sample and the exact CSV it must give."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor

HERE = Path(__file__).parent
CASES = sorted(HERE.glob("*.sql"))


def _sample(sql: str) -> str:
    for line in sql.splitlines():
        if line.startswith("-- sample:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("golden query without '-- sample:' line")


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case):
    sql = case.read_text()
    # Through stdin: a query starting with a -- comment would read as an option.
    r = advisor("sql", str(SAMPLES / _sample(sql)), "--format", "csv", stdin=sql)
    assert r.code == 0, r.err
    assert r.out == case.with_suffix(".csv").read_text()
