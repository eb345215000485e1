"""The diff document (what `advisor diff --json` prints): capture facts that differ
first, then operation latency distributions, then every rule side by side.

A side is one capture, or repeat captures of one setting (runs): distributions pool
their operations and resample the runs (noise.py); a rule's metric is the mean over the
runs, with their range."""

from __future__ import annotations

from pathlib import Path

from advisor.analyze import diagnose
from advisor.compare import noise
from advisor.compare.distributions import DISTRIBUTIONS, compare, samples
from advisor.compare.facts import differing, facts, merge
from advisor.rules import Rule
from advisor.store import open_store
from advisor.views import attach


def measure(store: Path, label: str, rules: list[Rule]) -> dict:
    """One run: its facts, its distributions' samples and its analysis document."""
    with open_store(store) as con:
        views = attach(con)
        run = {"label": label, "facts": facts(con, views),
               "samples": {d.name: samples(con, views, d) for d in DISTRIBUTIONS}}
        run["analysis"] = diagnose(con, rules, None, label)
    return run


def compare_stores(before: list[tuple[Path, str]], after: list[tuple[Path, str]], rules: list[Rule]) -> dict:
    """`before`, `after`: (store, label) of each run of that side."""
    return document([measure(s, label, rules) for s, label in before], [measure(s, label, rules) for s, label in after])


def document(b: list[dict], a: list[dict]) -> dict:
    """The diff document of measured runs (see measure)."""
    return {
        "before": [r["label"] for r in b],
        "after": [r["label"] for r in a],
        "method": noise.method(len(b), len(a)),
        "facts": differing(merge([r["facts"] for r in b]), merge([r["facts"] for r in a])),
        "distributions": [compare(d, [r["samples"][d.name] for r in b], [r["samples"][d.name] for r in a]) for d in DISTRIBUTIONS],
        "rules": side_by_side([r["analysis"] for r in b], [r["analysis"] for r in a]),
    }


def side_by_side(before: list[dict], after: list[dict]) -> list[dict]:
    out = []
    for fb in before[0]["findings"]:
        rule = fb["rule"]
        runs_b = [_finding(doc, rule) for doc in before]
        runs_a = [_finding(doc, rule) for doc in after]
        if any(f is None for f in runs_a + runs_b):
            continue
        verdicts = {"before": sorted({f["verdict"] for f in runs_b}), "after": sorted({f["verdict"] for f in runs_a})}
        metrics = [_metric(name, unit, [f["metrics"].get(name) for f in runs_b], [f["metrics"].get(name) for f in runs_a])
                   for name, unit in fb["metric_units"].items()]
        out.append({"rule": rule, "title": fb["title"], "verdict": verdicts,
                    "verdict_changed": verdicts["before"] != verdicts["after"], "metrics": metrics,
                    "replay": {"before": [_replay(f) for f in runs_b], "after": [_replay(f) for f in runs_a]}})
    return out


def _finding(doc: dict, rule: str) -> dict | None:
    return next((f for f in doc["findings"] if f["rule"] == rule), None)


def _metric(name: str, unit: str, before: list, after: list) -> dict:
    row = {"metric": name, "unit": unit, "before": _mean(before), "after": _mean(after), "change": None, "ratio": None,
           "before_runs": before, "after_runs": after, "beyond_runs": None}
    vb, va = row["before"], row["after"]
    if vb is not None and va is not None:
        row["change"] = va - vb
        row["ratio"] = va / vb if vb else None
        if len(before) > 1 or len(after) > 1:
            # With repeat runs: do the two sides' ranges of runs overlap?
            nb, na = _numbers(before), _numbers(after)
            row["beyond_runs"] = max(nb) < min(na) or max(na) < min(nb)
    return row


def _numbers(values: list) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _mean(values: list) -> float | None:
    nums = _numbers(values)
    if not nums or len(nums) != len(values):
        return None
    return sum(nums) / len(nums)


def _replay(finding: dict) -> dict | None:
    r = finding.get("replay")
    if not r or "metric" not in r:
        return None
    return {k: r[k] for k in ("metric", "before_policy", "after_policy", "before", "after")}
