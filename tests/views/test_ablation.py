"""The event-ablation matrix: every sample capture, every rule and the replay's workload,
with each event the rule reads hidden from the views (as if the capture had not recorded
it), one at a time and by view. Nothing may fail; what does not depend on the hidden
events must not change; what can no longer be measured must be named, with the events
that would measure it."""

from __future__ import annotations

import re

import pytest

from advisor.kernel import parse_release
from advisor.replay.workload import from_store
from advisor.rules import load_rules, run_rule
from advisor.store import open_store
from advisor.views import CATALOG, Views, attach
from tests.conftest import samples

RULES = load_rules()
FTRACE_SAMPLES = [m["file"] for m in samples() if m["kind"] in ("trace.dat", "tracefs-text", "trace_pipe-text", "report-text", "report-raw-text")]
# The workload summary's parts and the views they come from. The dirtying also depends on
# inode_writeback: writebacks that wrote nothing, seen by their marks and clears, take
# their re-dirtyings out of it (advisor.replay.redirty); and on block_requests: the pages
# of a device whose requests are left out are another filesystem's (the host's under a
# loop device), and which devices those are can depend on block_bio_queue (md, dm).
_DIRTYING = ("dirtying", "inode_writeback", "block_requests")
WORKLOAD_PARTS = {"dirtying_events": _DIRTYING, "inodes": _DIRTYING, "writers": _DIRTYING, "flush_requests": ("flush_space",),
                  "reclaim_events": ("reclaim",)}


def _state(views: Views) -> dict[str, tuple]:
    """What each view is here: its sources and the columns they fill."""
    return {n: (b.source, tuple(c.name for c in CATALOG[n].columns if b.fills(c.name))) for n, b in views.built.items()}


def _ablations(views: Views) -> list[frozenset[str]]:
    """Each event the rules read, alone, and each view's events together."""
    needed = {need.partition(".")[0] for r in RULES for need in r.needs}
    by_view = [frozenset(views.built[v].events_used()) for v in sorted(needed)]
    singles = {frozenset([e]) for group in by_view for e in group}
    return sorted(singles | {g for g in by_view if len(g) > 1}, key=sorted)


def _check_rule(full, cut, affected: set[str], hidden: frozenset[str], views: Views) -> None:
    if cut.verdict == "not-applicable" or full.verdict == "not-applicable":
        assert cut.filesystems, "a not-applicable finding names what the capture shows"
        return
    for metric, needs in full.measured_from.items():
        if any(n.partition(".")[0] in affected for n in needs):
            continue
        assert cut.measured_from.get(metric) == needs, (metric, hidden)
        assert cut.metrics[metric] == full.metrics[metric], (metric, hidden)
    lost = set(full.measured_from) - set(cut.measured_from)
    named = {u["metric"]: u for u in cut.unmeasured}
    for metric in lost:
        assert metric in named, (metric, hidden, cut.unmeasured)
        u = named[metric]
        assert u["why"] and u["record"], u
        assert any(not views.present.recorded(e) for e in u["record"]), (u, hidden)
        assert cut.capture_command and all(e in cut.capture_command for e in u["record"])
    if lost:
        assert "Not measurable from this capture" in cut.message
    # A metric measured without an optional view says so, with what would add it.
    for u in cut.partial:
        assert u["metric"] in cut.measured_from and u["without"] and u["record"], u
        assert cut.capture_command and all(e in cut.capture_command for e in u["record"])
        assert f"measured without {u['without']}" in cut.message
    # An unmeasured value reads "n/a" without the unit its measured value would have.
    assert not re.search(r"n/a(?: ms| s| bytes|x)\b", cut.message), cut.message


@pytest.mark.parametrize("sample", FTRACE_SAMPLES)
def test_event_ablation(sample, store_of):
    cases = 0
    with open_store(store_of(sample)) as con:
        views = attach(con)
        release = parse_release("5.0")
        full = {r.id: run_rule(con, r, release, views) for r in RULES}
        base = _state(views)
        full_workload = from_store(con, sample, views=views).summary()
        for hidden in _ablations(views):
            cut_views = attach(con, hide=hidden)
            state = _state(cut_views)
            # A view is affected when it is built differently, or reads a hidden event.
            affected = {n for n in base if state[n] != base[n] or hidden & set(views.built[n].events_used())}
            assert affected, f"hiding {sorted(hidden)} changed no view"
            for rule in RULES:
                if not any(n.partition(".")[0] in affected for n in rule.needs):
                    continue
                _check_rule(full[rule.id], run_rule(con, rule, release, cut_views), affected, hidden, cut_views)
                cases += 1
            workload = from_store(con, sample, views=cut_views).summary()
            for part, from_views in WORKLOAD_PARTS.items():
                if not affected & set(from_views):
                    assert workload[part] == full_workload[part], (part, hidden)
            for kind, n in full_workload["operations"].items():
                if f"{kind}_ops" not in affected:
                    assert workload["operations"].get(kind) == n, (kind, hidden)
    print(f"{sample}: {cases} ablation cases")
