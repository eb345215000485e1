"""Run rules over a store: views → metrics (the rule's SQL) → checks → verdict → finding.

The engine is generic: everything about a problem is in its rule file.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass

import duckdb

from advisor.capture.recipe import record_command
from advisor.kernel import KernelRelease, KernelStatus, kernel_status
from advisor.rules.context import Present, prepare
from advisor.rules.loader import RuleFileError
from advisor.rules.model import Rule
from advisor.rules.verdict import check, decide


@dataclass
class Finding:
    rule: Rule
    verdict: str
    kernel: KernelStatus
    metrics: dict
    signature: list
    pattern: list
    evidence: list[dict]
    missing: list[str]
    capture_command: str | None
    message: str

    def as_dict(self) -> dict:
        r = self.rule
        return {
            "rule": r.id,
            "title": r.title,
            "verdict": self.verdict,
            "message": self.message,
            "kernel_status": {"status": self.kernel.status, "reason": self.kernel.reason, "upgrade_to": list(self.kernel.upgrade_to)},
            "metrics": self.metrics,
            "metric_units": {m.name: m.unit for m in r.metrics},
            "signature": [c.as_dict() for c in self.signature],
            "pattern": [c.as_dict() for c in self.pattern],
            "evidence": self.evidence,
            "missing_events": self.missing,
            "capture_command": self.capture_command,
            "recommendation": {
                "upgrade": r.upgrade,
                "upgrade_to": list(self.kernel.upgrade_to),
                "settings": [vars(s) for s in r.settings],
                "other_causes": r.other_causes if self.verdict == "signature-without-known-bug" else None,
            },
            "fix": [vars(c) for c in r.fix],
            "regressing": [vars(c) for c in r.regressing],
            "references": list(r.references),
        }


def analyze(con, rules: list[Rule], release: KernelRelease | None) -> list[Finding]:
    present = Present.of(con)
    return [run_rule(con, rule, release, present) for rule in rules]


def run_rule(con, rule: Rule, release: KernelRelease | None, present: Present | None = None) -> Finding:
    ctx = prepare(con, rule, present)
    metrics = {m.name: None for m in rule.metrics}
    # Without a required event the queries may not even bind (its columns are unknown);
    # the finding is insufficient-data and its metrics stay unmeasured.
    for sql in () if ctx.missing else rule.metric_sql:
        metrics.update(_one_row(con, rule, sql))
    metrics = {k: _clean(v) for k, v in metrics.items()}
    status = kernel_status(release, rule.kernel)
    signature, pattern = check(rule, rule.signature, metrics), check(rule, rule.pattern, metrics)
    verdict = decide(status, ctx.missing, signature, pattern)
    evidence = [] if ctx.missing else [_evidence(con, rule, e) for e in rule.evidence]
    command = record_command([rule]) if ctx.missing else None
    return Finding(
        rule=rule,
        verdict=verdict,
        kernel=status,
        metrics=metrics,
        signature=signature,
        pattern=pattern,
        evidence=evidence,
        missing=ctx.missing,
        capture_command=command,
        message=_message(rule, verdict, metrics, status, ctx.missing, release, signature, pattern),
    )


def _one_row(con, rule: Rule, sql: str) -> dict:
    try:
        cur = con.execute(sql)
        row = cur.fetchone()
    except duckdb.Error as e:
        raise RuleFileError(f"{rule.source_file}: a [[queries]] query failed: {str(e).splitlines()[0]}") from None
    names = [d[0] for d in cur.description]
    return dict(zip(names, row)) if row else {}


def _evidence(con, rule: Rule, ev) -> dict:
    try:
        cur = con.execute(ev.sql)
        rows = cur.fetchmany(ev.limit)
    except duckdb.Error as e:
        raise RuleFileError(f"{rule.source_file}: evidence {ev.title!r} failed: {str(e).splitlines()[0]}") from None
    cols = [d[0] for d in cur.description]
    return {"title": ev.title, "columns": cols, "rows": [[_clean(v) for v in r] for r in rows]}


def _clean(v):
    """JSON-safe metric values: Decimal/ints as numbers, NaN as None."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return None if math.isnan(f) else (int(f) if f.is_integer() and abs(f) < 2**53 and not isinstance(v, float) else f)


class _Values(string.Formatter):
    """str.format over metrics where an unmeasured value prints as "n/a" whatever its format."""

    def format_field(self, value, format_spec):
        if value is None:
            return "n/a"
        return super().format_field(value, format_spec)


def _message(rule: Rule, verdict: str, metrics: dict, status: KernelStatus, missing: list[str], release, signature, pattern) -> str:
    if verdict == "insufficient-data":
        return f"This capture lacks the events the rule needs: {'; '.join(missing)}."
    values = dict(metrics)
    values.update({name: t.value for name, t in rule.thresholds.items()})
    values["kernel"] = str(release) if release else "unknown"
    values["kernel_reason"] = status.reason.rstrip(".") + "."
    values["upgrade_to"] = " or ".join(status.upgrade_to) or "n/a"
    if status.status == "unknown" and verdict == "at-risk":
        # The affected-kernel wording would claim a verdict the version cannot support:
        # state what the capture shows (the neutral template names the numbers and the reason).
        lead = "The problem's signature is in this capture" if _holds(signature) else "The workload pattern this problem needs is in this capture"
        return f"{lead}, but whether it is the known bug depends on the kernel. " + _format(rule, "not-affected", values)
    exercised = _holds(signature) or _holds(pattern)
    if verdict == "not-affected" and not exercised and "not-exercised" in rule.messages:
        return _format(rule, "not-exercised", values)
    text = _format(rule, verdict, values)
    if verdict == "not-affected" and status.status in ("fixed", "not-yet-affected"):
        text += (" The workload has the pattern this bug needs: on an affected kernel it would have been at risk."
                 if exercised else "")
    return text


def _holds(checks) -> bool:
    """All conditions hold, and there is at least one (as in verdict.decide)."""
    return bool(checks) and all(c.holds for c in checks)


def _format(rule: Rule, verdict: str, values: dict) -> str:
    try:
        return _Values().vformat(rule.messages[verdict], (), values)
    except (KeyError, ValueError, IndexError) as e:
        raise RuleFileError(f"{rule.source_file}: [messages] {verdict!r} uses an unknown or badly formatted value: {e}") from None
