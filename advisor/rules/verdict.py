"""From the kernel's status and the measured metrics to one verdict.

A condition holds (yes), fails (no), or cannot be told (unknown) when its metric was
not measurable in this capture; a list of conditions holds when all hold, fails when
one fails, and is unknown otherwise. The pattern counts as held when the signature is.

    kernel              signature   pattern     verdict
    (filesystem absent)                         not-applicable
    affected            yes         -           affected
    affected            no/unknown  yes         at-risk
    affected            no/unknown  no          not-affected (the workload did not exercise the bug)
    fixed / older       yes         -           signature-without-known-bug (another cause)
    fixed / older       no          -           not-affected
    fixed / older       unknown     yes/no      not-affected (what was not measured is named)
    unknown             yes, or pattern yes     at-risk (a vendor backport may or may not be there)
    unknown             no/unknown  no          not-affected
    any                 unknown     unknown     insufficient-data (with whatever was measured)
    any                 no          unknown     not-affected (except a fixed kernel: see above)

A rule's code_path conditions, where all hold, make the kernel affected before this
table is read (advisor.rules.engine): the capture shows the code before the fix running.
Where its unresolved conditions hold (a call whose return was lost with dropped events),
a metric measured as NULL is unknown rather than failing.
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
    holds: bool | None  # None: the metric could not be measured in this capture

    def as_dict(self) -> dict:
        c = self.condition
        return {"metric": c.metric, "op": c.op, "threshold": self.threshold, "threshold_name": c.threshold if isinstance(c.threshold, str) else None,
                "value": self.value, "holds": self.holds}


def check(rule: Rule, conditions: tuple[Condition, ...], metrics: dict, unmeasured: set[str] = frozenset()) -> list[Check]:
    """Each condition against the metrics. An unmeasured metric leaves it unknown; a
    measured NULL (no snapshot ran, so no longest snapshot) fails it."""
    out = []
    for c in conditions:
        value = metrics.get(c.metric)
        threshold = rule.threshold_value(c.threshold)
        number = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        if number is None:
            holds = None if c.metric in unmeasured else False
        else:
            holds = bool(_OPS[c.op](number, threshold))
        out.append(Check(c, threshold, number, holds))
    return out


def all_hold(checks: list[Check]) -> bool | None:
    """True when every check holds (and there is one), False when one fails, else None."""
    if not checks:
        return False
    if any(c.holds is False for c in checks):
        return False
    return True if all(c.holds for c in checks) else None


def decide(kernel: KernelStatus, applicable: bool, signature: list[Check], pattern: list[Check]) -> str:
    if not applicable:
        return "not-applicable"
    sig = all_hold(signature)
    pat = True if sig else all_hold(pattern)
    if sig is None and pat is None:
        return "insufficient-data"
    if kernel.status == "affected":
        return "affected" if sig else "at-risk" if pat else "not-affected"
    if kernel.status == "unknown":
        return "at-risk" if (sig or pat) else "not-affected"
    return "signature-without-known-bug" if sig else "not-affected"
