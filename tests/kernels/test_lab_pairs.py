"""The lab-kernel captures (lab/kernels/): one workload run on the stock 6.1.192 build and
on the same build with one writeback fix undone, two runs each (manifest "pair",
"kernel_variant").  Each rule must find its signature on the reverted kernel's capture
(verdict "affected" when --kernel names a release before the fix) and not on the stock
capture of the same workload; the replay of the stock capture under the before-fix
policy must predict what the reverted kernel measured, and the replay of the reverted
capture under the fixed policy what the stock kernel measured, within 25%."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.conftest import SAMPLES, samples
from tests.helpers import advisor as run_cli

TOLERANCE = 0.25
LAB = [m for m in samples("trace.dat") if m.get("kernel_variant")]
# a release inside each problem's affected range (rule.toml [kernel])
AFFECTED_RELEASE = {"sync-flusher-stall": "3.10.108", "stable-page-wait": "3.8.13",
                    "btrfs-snapshot-livelock": "4.20.7", "btrfs-full-fsync-fallback": "5.8.18",
                    "btrfs-delalloc-overflush": "5.10.7"}
FIXED_RELEASE = "6.1.192"
# the metric each pair's replay is judged on: what the problem changes
REPLAYED = {"sync-flusher-stall": ["sync_seconds"], "stable-page-wait": ["write_stall_count"],
            "btrfs-snapshot-livelock": ["written_during_snapshot_bytes"],
            "btrfs-full-fsync-fallback": ["fsync_p50_ms"]}
# (rule, check) -> measured reason; strict xfails, filled from the measured captures
XFAIL: dict[tuple[str, str], str] = {}


def by_pair() -> dict[str, dict[str, list[dict]]]:
    out: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for m in LAB:
        out[m["pair"]]["stock" if m["kernel_variant"] == "stock" else "revert"].append(m)
    return out


def analyze(m: dict) -> dict:
    rule = m["rule"]
    r = run_cli("analyze", str(SAMPLES / m["file"]), "--rule", rule, "--kernel", AFFECTED_RELEASE[rule], "--json")
    assert r.code == 0, r.err
    [f] = [f for f in json.loads(r.out)["findings"] if f["rule"] == rule]
    return f


def marks(rule: str, check: str):
    reason = XFAIL.get((rule, check))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def test_every_pair_has_two_runs_of_each_kernel():
    pairs = by_pair()
    assert len(pairs) >= 4
    for pair, sides in pairs.items():
        assert sorted(m["run"] for m in sides["stock"]) == [1, 2], pair
        assert sorted(m["run"] for m in sides["revert"]) == [1, 2], pair
        rules = {m["rule"] for m in sides["stock"] + sides["revert"]}
        assert len(rules) == 1, pair
        [rule] = rules
        for m in sides["revert"]:
            assert m["kernel_variant"] == f"revert:{rule}"
            assert m["kernel"].endswith(f"-revert-{rule}")
            assert m["kernel_build"]["patch"].startswith(f"patches/{rule}.patch sha256 ")
        for m in sides["stock"]:
            assert m["kernel"].endswith("-stock") and "patch" not in m["kernel_build"]
        # the same source and .config on both sides (the release string is make's LOCALVERSION)
        assert len({m["kernel_build"]["config_sha256"] for m in sides["stock"] + sides["revert"]}) == 1, pair


@pytest.mark.parametrize("m", [pytest.param(m, id=m["file"], marks=marks(m["rule"], "revert-affected"))
                               for m in LAB if m["kernel_variant"] != "stock"])
def test_rule_finds_its_signature_on_the_reverted_kernel(m):
    f = analyze(m)
    assert f["verdict"] == "affected", f["message"]


@pytest.mark.parametrize("m", [pytest.param(m, id=m["file"], marks=marks(m["rule"], "stock-not-affected"))
                               for m in LAB if m["kernel_variant"] == "stock"])
def test_rule_does_not_on_the_stock_kernel(m):
    f = analyze(m)
    assert f["verdict"] != "affected", f["message"]


def replay(m: dict, kernel: str) -> dict:
    r = run_cli("replay", str(SAMPLES / m["file"]), "--problem", m["rule"], "--kernel", kernel, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def other_policy(doc: dict, rule: str) -> dict:
    [row] = [r for r in doc["results"] if r["problem"] == rule and not r["own_kernel"]]
    return row["metrics"]


CROSS = []
for m in LAB:
    for metric in REPLAYED.get(m["rule"], []):
        check = "replay-stock-as-revert" if m["kernel_variant"] == "stock" else "replay-revert-as-stock"
        CROSS.append(pytest.param(m, metric, id=f"{m['file']}-{metric}", marks=marks(m["rule"], f"{check}:{metric}")))


@pytest.mark.parametrize("m, metric", CROSS)
def test_replay_predicts_the_other_kernel(m, metric):
    """Stock capture under the before-fix policy vs the reverted kernel's run of the same
    number (and the reverse), as measured by the rule on that capture."""
    sides = by_pair()[m["pair"]]
    stock = m["kernel_variant"] == "stock"
    [target] = [t for t in sides["revert" if stock else "stock"] if t["run"] == m["run"]]
    # the lab releases (6.1.192-stock, 6.1.192-revert-RULE) read as custom builds, so each
    # capture's own policy is named with --kernel: the fixed mainline 6.1.192 for stock,
    # a release before the fix for the reverted kernel
    own = {True: FIXED_RELEASE, False: AFFECTED_RELEASE[m["rule"]]}
    doc = replay(m, own[stock])
    predicted = other_policy(doc, m["rule"])[metric]
    observed = replay(target, own[not stock])["observed"][m["rule"]][metric]
    assert observed is not None and predicted is not None
    assert abs(predicted - observed) <= TOLERANCE * abs(observed) or (observed == 0 and predicted == 0), \
        f"{metric}: replay of {m['file']} predicts {predicted}, {target['file']} measured {observed}"
