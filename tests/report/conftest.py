"""Reports of real sample captures, written once per session through the CLI."""

from __future__ import annotations

import pytest

from tests.conftest import SAMPLES, manifest
from tests.helpers import advisor

#: The largest trace.dat sample by events (manifest.json) among those recorded with the
#: block layer's request events, which some of the report's charts draw.
LARGEST = max((m for m in manifest() if m["kind"] == "trace.dat" and "block_rq_complete" in m["event_counts"]),
              key=lambda m: m["event_count"])["file"]
HOSTILE = "hostile-names-ext4-v7-zstd.dat"


@pytest.fixture(scope="session")
def report_of(tmp_path_factory):
    made = {}

    def make(sample: str) -> str:
        if sample not in made:
            out = tmp_path_factory.mktemp("report") / (sample + ".html")
            r = advisor("report", str(SAMPLES / sample), "-o", str(out))
            assert r.code == 0, r.err
            made[sample] = out
        return made[sample]

    return make
