"""What every problem model provides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from advisor.replay.workload import Workload


@dataclass(frozen=True)
class Policy:
    id: str
    fixed: bool  # the behaviour after the fix
    code_path: str  # the kernel code this models


@dataclass(frozen=True)
class ProblemModel:
    problem: str  # the rule id (advisor/problems/<package>/rule.toml)
    commit: str  # the fix
    policies: tuple[Policy, ...]
    # Why this workload cannot exercise the problem, or None when it can.
    not_applicable: Callable[[Workload], str | None]
    # What the capture itself shows, under the same metric names (empty for synthetic).
    observed: Callable[[Workload], dict]
    # The policy's predicted metrics for this workload.
    simulate: Callable[[Workload, Policy], dict]
    # The policy whose code path the capture itself shows running, with that evidence, or
    # None when it cannot tell (a vendor or custom kernel may lack a fix its release implies).
    shown_policy: Callable[[Workload], tuple[str, str] | None] | None = None

    def policy(self, policy_id: str) -> Policy:
        for p in self.policies:
            if p.id == policy_id:
                return p
        raise KeyError(policy_id)


def ms(ns: float) -> float:
    return round(float(ns) / 1e6, 4)


def seconds(ns: float) -> float:
    return round(float(ns) / 1e9, 6)


def needs_op(w: Workload, kind: str, missing: str) -> str | None:
    """Why a problem that replays operations of `kind` over the dirtying cannot apply."""
    if not len(w.op(kind)):
        return f"no {missing} in the workload"
    if not len(w.dirty_ts):
        return "no page dirtying in the workload"
    return None


def longest_observed(w: Workload, kind: str, metric: str) -> dict:
    """What the capture shows of an operation kind: how many completed
    (`<metric>_count`) and how long the longest took (`<metric>_seconds`)."""
    ops = w.op(kind)
    if not len(ops) or not ops.complete.any():
        return {}
    i = ops.longest()
    return {f"{metric}_count": int(ops.complete.sum()), f"{metric}_seconds": seconds(ops.end[i] - ops.start[i])}
