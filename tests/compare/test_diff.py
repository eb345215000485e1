"""advisor diff on real captures: dbench on ext4 with stable_writes 0 and 1, two runs each
(sample_traces/manifest.json, compare_group dbench-ext4-stable-writes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from advisor.compare import noise
from tests.conftest import SAMPLES, manifest
from tests.helpers import advisor, one_line_error


def _runs(stable: int) -> list[str]:
    runs = [m for m in manifest() if m.get("compare_group") == "dbench-ext4-stable-writes" and m["setting"]["stable_writes"] == stable]
    return [str(SAMPLES / m["file"]) for m in sorted(runs, key=lambda m: m["run"])]


def _diff(*args: str) -> dict:
    r = advisor("diff", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def _dist(doc: dict, name: str) -> dict:
    return next(d for d in doc["distributions"] if d["name"] == name)


@pytest.fixture(scope="module")
def settings() -> dict:
    s0, s1 = _runs(0), _runs(1)
    assert len(s0) == 2 and len(s1) == 2
    return {"s0": s0, "s1": s1, "between": _diff(s0[0], s1[0])}


def test_the_changed_setting_flags_write_stalls(settings):
    stalls = _dist(settings["between"], "write_stall")
    assert stalls["flagged"]
    fraction = next(c for c in stalls["changes"] if c["stat"] == "fraction")
    assert fraction["before"] == 0 and fraction["after"] > 0 and fraction["interval"][0] > 0
    rule = next(r for r in settings["between"]["rules"] if r["rule"] == "stable-page-wait")
    assert rule["verdict"] == {"before": ["not-affected"], "after": ["signature-without-known-bug"]}
    count = next(m for m in rule["metrics"] if m["metric"] == "write_stall_count")
    assert count["before"] == 0 and count["after"] > 0


@pytest.mark.parametrize("stable", [0, 1])
def test_repeat_runs_of_one_setting_do_not_flag_write_stalls(settings, stable):
    runs = settings[f"s{stable}"]
    doc = _diff(runs[0], runs[1])
    assert not _dist(doc, "write_stall")["flagged"]
    rule = next(r for r in doc["rules"] if r["rule"] == "stable-page-wait")
    assert not rule["verdict_changed"]
    # Same kernel, clock, device and events: no fact limits the comparison.
    assert [f["fact"] for f in doc["facts"] if f["differs"]] == []


def test_repeat_runs_per_side_widen_the_interval_by_run_to_run_variation(settings):
    """One run per side: the median fsync moves beyond sampling noise between repeat runs
    of one setting (7.4 ms vs 14.5 ms); with both runs on each side, the run-to-run
    variation enters the interval and only the write stalls stay flagged."""
    s0, s1 = settings["s0"], settings["s1"]
    repeat = _diff(s0[0], s0[1])
    assert next(c for c in _dist(repeat, "fsync")["changes"] if c["stat"] == "p50_ms")["flagged"]
    both = _diff("-b", s0[0], "-b", s0[1], "-a", s1[0], "-a", s1[1])
    assert "over runs, then operations" in both["method"]
    assert _dist(both, "write_stall")["flagged"]
    assert not _dist(both, "fsync")["flagged"] and not _dist(both, "write")["flagged"]
    metric = next(m for r in both["rules"] if r["rule"] == "stable-page-wait" for m in r["metrics"] if m["metric"] == "write_stall_count")
    assert metric["before_runs"] == [0, 0] and metric["beyond_runs"] is True


def test_differing_capture_facts_come_first():
    doc = _diff(str(SAMPLES / "dbench-stable0-ext4-run1-v7-zstd.dat"), str(SAMPLES / "sync-xfs-v6.dat"))
    differing = [f["fact"] for f in doc["facts"] if f["differs"]]
    assert {"kernel", "clock", "event_set"} <= set(differing)
    assert [f["fact"] for f in doc["facts"][: len(differing)]] == differing
    kernel = next(f for f in doc["facts"] if f["fact"] == "kernel")
    assert (kernel["before"], kernel["after"]) == ("6.18.44-fc-v595", "6.18.44-fc-v669")


def test_diff_is_deterministic_and_names_its_method(settings):
    s0, s1 = settings["s0"], settings["s1"]
    again = _diff(s0[0], s1[0])
    assert again == settings["between"]
    assert "bootstrap" in again["method"] and str(noise.SEED) in again["method"]


def test_terminal_output_flags_the_stalls(settings):
    r = advisor("diff", settings["s0"][0], settings["s1"][0])
    assert r.code == 0, r.err
    line = next(l for l in r.out.splitlines() if "fraction" in l)
    assert "beyond noise" in line
    # Piped: plain columns for grep and awk, no box-drawing characters.
    assert not any(c in r.out for c in "┃━│╇"), r.out[:400]


def test_percentile_draws_match_a_plain_bootstrap():
    """The order-statistic draw equals resampling with replacement: same distribution."""
    rng = np.random.default_rng(1)
    values = np.sort(rng.lognormal(0, 1, 300))
    exact = noise.percentile_draws([values], 0.9, np.random.default_rng(2))
    plain = np.array([noise.nearest_rank(np.sort(rng.choice(values, len(values))), 0.9) for _ in range(noise.RESAMPLES)])
    for q in (0.05, 0.5, 0.95):
        assert abs(np.quantile(exact, q) - np.quantile(plain, q)) < 0.1 * np.quantile(plain, 0.5)


@pytest.mark.parametrize("args", [["a.dat"], ["x", "y", "z"], ["-b", "a.dat"]])
def test_usage_errors_are_one_line(args):
    one_line_error(advisor("diff", *args))


def test_missing_capture_is_one_line():
    r = advisor("diff", str(SAMPLES / "no-such.dat"), str(SAMPLES / "sync-xfs-v6.dat"))
    one_line_error(r)
    assert "no-such.dat" in r.err


def test_the_same_filesystem_with_other_event_counts_is_not_a_difference():
    from advisor.compare.facts import differing

    base = {k: None for k in ("kernel", "clock", "format", "cpus", "devices", "event_set", "lost_events", "damaged", "span_seconds", "events")}
    base.update(event_set=[], devices=[], lost_events=0)
    a = {**base, "filesystems": ["btrfs (695 btrfs events; bdi btrfs-1)", "unknown (bdi 254:0)"]}
    b = {**base, "filesystems": ["btrfs (697 btrfs events; bdi btrfs-1)", "unknown (bdi 254:0)"]}
    c = {**base, "filesystems": ["xfs (1,204 xfs events)", "unknown (bdi 254:0)"]}
    row = lambda x, y: next(r for r in differing(x, y) if r["fact"] == "filesystems")  # noqa: E731
    assert not row(a, b)["differs"] and row(a, c)["differs"]
