"""`advisor analyze` on a damaged capture says so before any verdict: a
warning naming the file and the offset on stderr, the capture section of the
results on stdout (printed before the rule sections) and the JSON document."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor
from tests.hostile import layout as L

VERDICTS = ("affected", "at-risk", "not-affected", "signature-without-known-bug", "insufficient-data")


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """sync-xfs-v6.dat cut in the middle of a page of CPU 1."""
    d = (SAMPLES / "sync-xfs-v6.dat").read_bytes()
    lay = L.parse(d)
    f = tmp_path_factory.mktemp("damaged") / "cut.dat"
    f.write_bytes(d[: lay.cpus[1].offset + 40 * 4096 + 100])
    return f


def test_report_says_damaged_before_any_verdict(damaged, tmp_path):
    r = advisor("analyze", str(damaged), env={"WRITEBACK_ADVISOR_CACHE": str(tmp_path)})
    assert r.code == 0, r.err
    assert "Traceback" not in r.err
    assert r.err.lstrip().startswith("warning:") and "cut.dat" in r.err and "offset 0x" in r.err
    first_verdict = min(r.out.index(v) for v in VERDICTS if v in r.out)
    assert r.out.index("damaged") < first_verdict


def test_json_marks_the_capture_damaged(damaged, tmp_path):
    r = advisor("analyze", str(damaged), "--json", env={"WRITEBACK_ADVISOR_CACHE": str(tmp_path)})
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["capture"]["damaged"] is True
    assert any("offset 0x" in d for d in doc["capture"]["damage"])
    assert "damaged" in r.err


def test_a_partial_store_file_is_reported_damaged(damaged, tmp_path):
    store = tmp_path / "incident.duckdb"
    assert advisor("ingest", str(damaged), "-o", str(store)).code == 2
    r = advisor("analyze", str(store))
    assert r.code == 0, r.err
    first_verdict = min(r.out.index(v) for v in VERDICTS if v in r.out)
    assert "damaged" in r.out[:first_verdict]
