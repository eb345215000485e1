"""`advisor report` on real captures: self-contained, every part there, size bounds."""

from __future__ import annotations

import re

from tests.report.conftest import HOSTILE, LARGEST

TIME_CHARTS = {"dirty", "throughput", "latency", "latency-histogram", "spans", "waits"}


def test_report_of_the_largest_sample_has_every_part_and_stays_small(report_of):
    page = report_of(LARGEST).read_text()
    charts = set(re.findall(r'<figure class="chart" id="chart-([a-z-]+)"', page))
    # The largest capture with block requests recorded global_dirty_state, block issue/complete, syscalls and folio waits.
    assert TIME_CHARTS <= charts, charts
    assert "replay" in charts
    assert len(page.encode()) < 10 * 1024 * 1024
    # Downsampled series say so on the chart: fio's 36k requests become a heat map.
    assert "heat map: " in page and "requests counted in 400 time" in page
    for rule in ("stable-page-wait", "sync-flusher-stall", "btrfs-snapshot-livelock"):
        assert f'id="finding-{rule}"' in page


def test_report_is_self_contained(report_of):
    page = report_of(HOSTILE).read_text()
    # Nothing to fetch: no src/href to a URL, no external stylesheet or script.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "<link" not in page and "<script src" not in page
    assert "default-src &#x27;none&#x27;" in page  # the CSP meta tag, attribute-escaped


def test_stalls_and_tasks_of_the_hostile_sample(report_of):
    page = report_of(HOSTILE).read_text()
    assert 'id="chart-stalls"' in page
    assert '<section id="processes">' in page
