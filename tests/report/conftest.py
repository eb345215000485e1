"""Reports of real sample captures, written once per session through the CLI."""

from __future__ import annotations

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor

#: The largest sample by events (manifest.json: 314,768 events, 5.35 s).
LARGEST = "fio-ext4-v7-zstd.dat"
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
