"""Every threshold of every rule has its own firing and quiet fixture: at the threshold
the signature holds (affected on a kernel in the affected range), just below it the
condition on that threshold fails while every other signature condition still holds, and
on a fixed kernel the same snippets say signature-without-known-bug / not-affected.
Fixtures: advisor/problems/<package>/fixtures.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor import problems
from advisor.kernel import parse_release
from advisor.problems.btrfs_delalloc_overflush.fixtures import delalloc
from advisor.problems.fixtures import MS, Case
from advisor.problems.sync_flusher_stall.fixtures import sync_stall
from advisor.rules import load_rules, run_rule
from advisor.store import open_store, store_for

RULES = {r.id: r for r in load_rules()}


CASES = problems.threshold_cases()


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


SIGNATURE_CASES = [c for c in CASES if not c.code_path]
CODE_PATH_CASES = [c for c in CASES if c.code_path]


@pytest.mark.parametrize("case", SIGNATURE_CASES, ids=[f"{c.rule}-{c.threshold}-{i}" for i, c in enumerate(SIGNATURE_CASES)])
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


@pytest.mark.parametrize("case", CODE_PATH_CASES, ids=[f"{c.rule}-{c.threshold}" for c in CODE_PATH_CASES])
def test_code_path_shown_at_threshold_and_not_below(tmp_path, case):
    """On a kernel whose release has the fix, the capture showing the code before it makes
    the finding affected (the build lacks the fix); just below the threshold it does not."""
    rule = rule_for(case)
    shown = finding(tmp_path, case.rule, case.at(), case.good, rule)
    assert shown.verdict == "affected" and shown.build_lacks_fix, (shown.message, shown.metrics)
    on_threshold = [c for c in shown.code_path if c.condition.threshold == case.threshold]
    assert on_threshold and all(c.value == c.threshold for c in on_threshold), "the snippet is not AT the threshold"
    assert "yet this capture shows the code before the fix running" in shown.message

    hidden = finding(tmp_path, case.rule, case.below(), case.good, rule)
    assert hidden.verdict == "signature-without-known-bug" and not hidden.build_lacks_fix, (hidden.message, hidden.metrics)
    assert {c.condition.threshold for c in hidden.code_path if not c.holds} == {case.threshold}, hidden.metrics


def test_vendor_kernel_is_not_given_a_verdict_it_cannot_support(tmp_path):
    """Debian's 5.10.0-28 hides its stable point: the whole-inode flushes are there, the bug may not be."""
    f = finding(tmp_path, "btrfs-delalloc-overflush", delalloc(10, 40), "5.10.0-28-amd64")
    assert f.verdict == "at-risk"
    assert f.kernel.status == "unknown"
    assert "depends on the kernel" in f.message


def test_metrics_are_measured_from_the_snippet(tmp_path):
    f = finding(tmp_path, "btrfs-delalloc-overflush", delalloc(10, 40), "5.10.7")
    assert f.metrics["flush_space_count"] == 1
    assert f.metrics["reclaim_requested_bytes"] == 40960
    assert f.metrics["delalloc_flushed_bytes"] == 40 * 4096
    assert f.metrics["overflush_ratio"] == pytest.approx(4.0)
    assert f.metrics["whole_inode_flush_share"] == pytest.approx(1.0)
    assert f.metrics["whole_inode_flushed_bytes"] == 40 * 4096
    assert finding(tmp_path, "btrfs-delalloc-overflush", delalloc(10, 40, whole=10), "5.10.7").metrics[
        "whole_inode_flush_share"] == pytest.approx(0.25)
    assert f.metrics["unbounded_flush_steps"] == 0
    f = finding(tmp_path, "sync-flusher-stall", sync_stall(1_000 * MS, 600 * MS), "3.10")
    assert f.metrics["sync_seconds"] == pytest.approx(1.0)
    assert f.metrics["flusher_sync_all_seconds"] == pytest.approx(0.6)
    assert f.metrics["inodes_written_during_sync"] == 3
    assert f.verdict == "at-risk"  # sync wrote inodes through the flusher, but the stall is under 1 s


def test_a_step_asked_for_everything_is_counted_not_summed(tmp_path):
    """Data-space reclaim asks every step for (u64)-1 bytes: summed, that read as 1.8e19
    bytes asked. It is counted apart and left out of the written/asked ratio."""
    f = finding(tmp_path, "btrfs-delalloc-overflush", delalloc(10, 40, whole=0, data_steps=2), "5.10.8")
    assert f.metrics["flush_space_count"] == 3 and f.metrics["unbounded_flush_steps"] == 2
    assert f.metrics["reclaim_requested_bytes"] == 40960
    assert f.metrics["delalloc_flushed_bytes"] == 3 * 40 * 4096
    assert f.metrics["overflush_ratio"] == pytest.approx(4.0)
    assert f.metrics["whole_inode_flush_share"] == 0.0
    assert f.verdict == "not-affected" and "2 of them asking for all there is" in f.message
    only = finding(tmp_path, "btrfs-delalloc-overflush", delalloc(10, 40, steps=0, data_steps=1), "5.10.8")
    assert only.metrics["unbounded_flush_steps"] == 1 and only.metrics["reclaim_requested_bytes"] == 0
    assert only.metrics["overflush_ratio"] is None and only.metrics["whole_inode_flush_share"] == 0.0
