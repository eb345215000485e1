"""From the kernel's status and the measured metrics to one of the five verdicts.

    kernel          signature   pattern   verdict
    affected        yes         -         affected
    affected        no          yes       at-risk
    affected        no          no        not-affected (the workload did not exercise the bug)
    fixed / older   yes         -         signature-without-known-bug (another cause)
    fixed / older   no          -         not-affected (says whether the pattern was there)
    unknown         yes or pattern        at-risk (a vendor backport may or may not be there)
    unknown         no          no        not-affected
    any, required events missing          insufficient-data
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from advisor.kernel import KernelStatus
from advisor.rules.model import Condition, Rule

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


@dataclass(frozen=True)
class Check:
    condition: Condition
    threshold: float
    value: float | None
    holds: bool

    def as_dict(self) -> dict:
        c = self.condition
        return {"metric": c.metric, "op": c.op, "threshold": self.threshold, "threshold_name": c.threshold if isinstance(c.threshold, str) else None, "value": self.value, "holds": self.holds}


def check(rule: Rule, conditions: tuple[Condition, ...], metrics: dict) -> list[Check]:
    """Each condition against the metrics; a metric the capture could not measure (None) fails it."""
    out = []
    for c in conditions:
        value = metrics.get(c.metric)
        threshold = rule.threshold_value(c.threshold)
        number = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        out.append(Check(c, threshold, number, number is not None and _OPS[c.op](number, threshold)))
    return out


def decide(kernel: KernelStatus, missing: list[str], signature: list[Check], pattern: list[Check]) -> str:
    if missing:
        return "insufficient-data"
    sig = bool(signature) and all(c.holds for c in signature)
    pat = sig or (bool(pattern) and all(c.holds for c in pattern))
    if kernel.status == "affected":
        return "affected" if sig else "at-risk" if pat else "not-affected"
    if kernel.status == "unknown":
        return "at-risk" if pat else "not-affected"
    return "signature-without-known-bug" if sig else "not-affected"
