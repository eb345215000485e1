"""One model per documented problem: the kernel policy before and after its fix.

Each module names the kernel code path it stands for and the commit that changed it,
and exposes `MODEL`, a `ProblemModel`: its policies, what the workload must contain for
the problem to apply, what the capture itself shows, and `simulate(workload, policy)`.
"""

from __future__ import annotations

from advisor.replay.policies import delalloc, full_fsync, snapshot, stable_pages, sync_flusher
from advisor.replay.policies.base import Policy, ProblemModel

MODELS: dict[str, ProblemModel] = {
    m.MODEL.problem: m.MODEL for m in (snapshot, sync_flusher, stable_pages, full_fsync, delalloc)
}

__all__ = ["MODELS", "Policy", "ProblemModel"]
