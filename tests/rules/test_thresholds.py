"""Every rule fires at its threshold and stays quiet just below it, on a kernel
inside the affected range, and says signature-without-known-bug / not-affected
on a fixed kernel. Snippets: tests/rules/snippets.py."""

from __future__ import annotations

import pytest

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store, store_for
from tests.rules import snippets as S

RULES = {r.id: r for r in load_rules()}
MS = S.MS

# rule, affected kernel, fixed kernel, snippet at the threshold, snippet just below it
CASES = [
    ("stable-page-wait", "3.8.13", "3.9", lambda: S.stable_page_wait(1 * MS), lambda: S.stable_page_wait(1 * MS - 1_000)),
    ("sync-flusher-stall", "3.10.108", "3.11", lambda: S.sync_stall(1_000 * MS, 1_000 * MS), lambda: S.sync_stall(1_000 * MS, 999 * MS)),
    ("sync-flusher-stall", "3.10.108", "3.11", lambda: S.sync_stall(1_000 * MS, 1_000 * MS), lambda: S.sync_stall(999 * MS, 998 * MS)),
    ("btrfs-snapshot-livelock", "4.20.7", "4.20.8", lambda: S.snapshot(1_000 * MS, 8, 2), lambda: S.snapshot(999 * MS, 8, 2)),
    ("btrfs-snapshot-livelock", "4.19.20", "4.19.21", lambda: S.snapshot(1_000 * MS, 8, 2), lambda: S.snapshot(1_000 * MS, 8, 1)),
    ("btrfs-full-fsync-fallback", "5.8.18", "5.9", lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(100, 4 * MS - 10_000, True)),
    ("btrfs-full-fsync-fallback", "5.8.18", "5.9", lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(100, 4 * MS, False)),
    ("btrfs-full-fsync-fallback", "5.8.18", "5.9", lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(99, 4 * MS, True)),
    ("btrfs-delalloc-overflush", "5.10.7", "5.10.8", lambda: S.delalloc(10, 40), lambda: S.delalloc(10, 39)),
    ("btrfs-delalloc-overflush", "5.11-rc3", "5.11-rc4", lambda: S.delalloc(10, 40), lambda: S.delalloc(10, 39)),
]


def finding(tmp_path, name, snippet, kernel):
    path = snippet.write(tmp_path / f"{name}.txt")
    store = store_for([path]).store
    with open_store(store) as con:
        return run_rule(con, RULES[name], parse_release(kernel))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_fires_at_threshold_and_not_below(tmp_path, case):
    name, bad, good, at, below = case
    fired = finding(tmp_path, name, at(), bad)
    assert fired.verdict == "affected", (fired.message, fired.metrics)
    assert all(c.holds for c in fired.signature)
    quiet = finding(tmp_path, name, below(), bad)
    assert quiet.verdict in ("at-risk", "not-affected"), (quiet.message, quiet.metrics)
    assert not all(c.holds for c in quiet.signature)
    assert finding(tmp_path, name, at(), good).verdict == "signature-without-known-bug"
    assert finding(tmp_path, name, below(), good).verdict == "not-affected"


def test_vendor_kernel_is_not_given_a_verdict_it_cannot_support(tmp_path):
    """Debian's 5.10.0-28 hides its stable point: the over-flush is there, the bug may not be."""
    f = finding(tmp_path, "btrfs-delalloc-overflush", S.delalloc(10, 40), "5.10.0-28-amd64")
    assert f.verdict == "at-risk"
    assert f.kernel.status == "unknown"
    assert "depends on the kernel" in f.message


def test_metrics_are_measured_from_the_snippet(tmp_path):
    f = finding(tmp_path, "btrfs-delalloc-overflush", S.delalloc(10, 40), "5.10.7")
    assert f.metrics["flush_space_count"] == 1
    assert f.metrics["reclaim_requested_bytes"] == 40960
    assert f.metrics["delalloc_flushed_bytes"] == 40 * 4096
    assert f.metrics["overflush_ratio"] == pytest.approx(4.0)
    f = finding(tmp_path, "sync-flusher-stall", S.sync_stall(1_000 * MS, 600 * MS), "3.10")
    assert f.metrics["sync_seconds"] == pytest.approx(1.0)
    assert f.metrics["background_writeback_stalled_seconds"] == pytest.approx(0.6)
    assert f.metrics["inodes_written_during_sync"] == 3
    assert f.verdict == "at-risk"  # sync wrote inodes through the flusher, but the stall is under 1 s
