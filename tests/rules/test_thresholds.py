"""Every threshold of every rule has its own firing and quiet fixture: at the threshold
the signature holds (affected on a kernel in the affected range), just below it the
condition on that threshold fails while every other signature condition still holds, and
on a fixed kernel the same snippets say signature-without-known-bug / not-affected.
Snippets: tests/rules/snippets.py."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import pytest

from advisor.kernel import parse_release
from advisor.rules import load_rules, run_rule
from advisor.store import open_store, store_for
from tests.rules import snippets as S

RULES = {r.id: r for r in load_rules()}
MS = S.MS


@dataclass(frozen=True)
class Case:
    rule: str
    threshold: str
    bad: str  # a kernel in the affected range
    good: str  # the first fixed kernel
    at: Callable[[], S.Snippet]
    below: Callable[[], S.Snippet]
    # The threshold's value for this case, when not the rule file's: a count threshold of 1
    # cannot be undercut without removing the events the other conditions measure (0 stalls
    # have no p99), so it is also exercised alone at a raised value.
    value: float | None = None
    # Conditions on other thresholds that must fail too below (None: every other one holds).
    coupled: tuple[str, ...] = ()


CASES = [
    Case("stable-page-wait", "min_stall_p99_ms", "3.8.13", "3.9",
         lambda: S.stable_page_wait(1 * MS), lambda: S.stable_page_wait(1 * MS - 1_000)),
    Case("stable-page-wait", "min_stalls", "3.8.13", "3.9",
         lambda: S.stable_page_wait(1 * MS, stalls=1), lambda: S.stable_page_wait(1 * MS, stalls=0),
         coupled=("min_stall_p99_ms",)),
    Case("stable-page-wait", "min_stalls", "3.8.13", "3.9",
         lambda: S.stable_page_wait(1 * MS, stalls=2), lambda: S.stable_page_wait(1 * MS, stalls=1), value=2.0),
    # two flushers (a sync across two filesystems) keep 2 x 0.999 s of WB_SYNC_ALL work in a 0.999 s sync
    Case("sync-flusher-stall", "min_sync_seconds", "3.10.108", "3.11",
         lambda: S.sync_stall(1_000 * MS, 1_000 * MS, flushers=2), lambda: S.sync_stall(999 * MS, 999 * MS, flushers=2)),
    Case("sync-flusher-stall", "min_stall_seconds", "3.10.108", "3.11",
         lambda: S.sync_stall(1_000 * MS, 1_000 * MS), lambda: S.sync_stall(1_000 * MS, 999 * MS)),
    Case("sync-flusher-stall", "min_stall_fraction", "3.10.108", "3.11",
         lambda: S.sync_stall(2_000 * MS, 1_000 * MS), lambda: S.sync_stall(2_002 * MS, 1_000 * MS)),
    Case("btrfs-snapshot-livelock", "min_snapshot_seconds", "4.20.7", "4.20.8",
         lambda: S.snapshot(1_000 * MS, 8, 2), lambda: S.snapshot(999 * MS, 8, 2)),
    Case("btrfs-snapshot-livelock", "min_late_fraction", "4.19.20", "4.19.21",
         lambda: S.snapshot(1_000 * MS, 8, 2), lambda: S.snapshot(1_000 * MS, 8, 1)),
    Case("btrfs-full-fsync-fallback", "min_tail_ratio", "5.8.18", "5.9",
         lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(100, 4 * MS - 10_000, True)),
    Case("btrfs-full-fsync-fallback", "min_reclaim_fsyncs", "5.8.18", "5.9",
         lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(100, 4 * MS, False)),
    Case("btrfs-full-fsync-fallback", "min_fsyncs", "5.8.18", "5.9",
         lambda: S.fsyncs(100, 4 * MS, True), lambda: S.fsyncs(99, 4 * MS, True)),
    Case("btrfs-delalloc-overflush", "min_overflush_ratio", "5.10.7", "5.10.8",
         lambda: S.delalloc(10, 40), lambda: S.delalloc(10, 39)),
    Case("btrfs-delalloc-overflush", "min_overflush_ratio", "5.11-rc3", "5.11-rc4",
         lambda: S.delalloc(10, 40), lambda: S.delalloc(10, 39)),
    Case("btrfs-delalloc-overflush", "min_flush_steps", "5.10.7", "5.10.8",
         lambda: S.delalloc(10, 40, steps=1), lambda: S.delalloc(10, 40, steps=0), coupled=("min_overflush_ratio",)),
    Case("btrfs-delalloc-overflush", "min_flush_steps", "5.10.7", "5.10.8",
         lambda: S.delalloc(10, 40, steps=2), lambda: S.delalloc(10, 40, steps=1), value=2.0),
]


def rule_for(case: Case):
    rule = RULES[case.rule]
    if case.value is None:
        return rule
    t = rule.thresholds[case.threshold]
    return replace(rule, thresholds={**rule.thresholds, case.threshold: replace(t, value=case.value)})


def finding(tmp_path, name, snippet, kernel, rule=None):
    path = snippet.write(tmp_path / f"{name}.txt")
    store = store_for([path]).store
    with open_store(store) as con:
        return run_rule(con, rule or RULES[name], parse_release(kernel))


def test_every_threshold_has_its_own_case():
    """A threshold added to a rule file without a fixture here fails this test."""
    wanted = {(r.id, t) for r in RULES.values() for t in r.thresholds}
    alone = {(c.rule, c.threshold) for c in CASES if not c.coupled}
    assert wanted == {(c.rule, c.threshold) for c in CASES}
    assert wanted == alone, f"thresholds never exercised alone: {wanted - alone}"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}-{c.threshold}-{i}" for i, c in enumerate(CASES)])
def test_fires_at_threshold_and_not_below(tmp_path, case):
    rule = rule_for(case)
    fired = finding(tmp_path, case.rule, case.at(), case.bad, rule)
    assert fired.verdict == "affected", (fired.message, fired.metrics)
    assert all(c.holds for c in fired.signature)
    on_threshold = [c for c in fired.signature if c.condition.threshold == case.threshold]
    assert on_threshold and all(c.value == c.threshold for c in on_threshold), "the firing snippet is not AT the threshold"

    quiet = finding(tmp_path, case.rule, case.below(), case.bad, rule)
    assert quiet.verdict in ("at-risk", "not-affected"), (quiet.message, quiet.metrics)
    failing = {c.condition.threshold for c in quiet.signature if not c.holds}
    assert failing == {case.threshold, *case.coupled}, (failing, quiet.metrics)

    assert finding(tmp_path, case.rule, case.at(), case.good, rule).verdict == "signature-without-known-bug"
    assert finding(tmp_path, case.rule, case.below(), case.good, rule).verdict == "not-affected"


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
