"""Numbers in the HTML report as people read them: quantities with thousands separators,
identifiers and timestamps as the trace prints them, never an exponent."""

from __future__ import annotations

import re

from tests.conftest import SAMPLES
from tests.helpers import advisor


def test_pids_and_timestamps_have_no_separators_and_checks_no_exponents(tmp_path):
    out = tmp_path / "r.html"
    r = advisor("report", str(SAMPLES / "snapshot-seq-btrfs-run1-v7-zstd.dat"), "-o", str(out), "--no-replay")
    assert r.code == 0, r.err
    page = out.read_text()
    tasks = page.split('<table class="processes">', 1)[1].split("</table>", 1)[0]
    pids = [row[1] for row in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>", tasks)]
    assert pids and all(p.isdigit() for p in pids), pids[:5]
    evidence = page.split('<table class="evidence">', 1)[1].split("</table>", 1)[0]
    assert "BTRFS_IOC_SNAP_CREATE_V2 (0x50009417)" in page
    assert not re.search(r"<td>\d{1,3}(,\d{3}){3,}</td>", evidence)  # no 3,867,945,139,415
    checks = "".join(t.split("</table>", 1)[0] for t in page.split('<table class="checks">')[1:])
    assert checks and not re.search(r"\de[+-]\d", checks), checks[:2000]
