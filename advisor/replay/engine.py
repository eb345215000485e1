"""Run a workload under each problem's policies; mark the one the capture's own kernel
follows (from the rule file's affected range), next to what the capture shows."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.errors import UsageError
from advisor.kernel import kernel_status, parse_release
from advisor.replay.policies import MODELS
from advisor.replay.workload import Workload
from advisor.rules import load_rules

# kernel_status → which policy that kernel runs: the fixed one unless it is affected.
_OWN = {"affected": False, "fixed": True, "not-yet-affected": True}


@dataclass
class Selection:
    problems: list[str]
    policies: dict[str, list[str]]  # problem → policy ids


def select(problems: list[str] | None, policy_args: list[str] | None) -> Selection:
    """--problem ID (repeatable) and --policy ID=a,b: unknown ids are usage errors."""
    chosen = list(problems) if problems else list(MODELS)
    for p in chosen:
        if p not in MODELS:
            raise UsageError(f"unknown problem {p!r}; known: {', '.join(MODELS)}")
    policies = {p: [x.id for x in MODELS[p].policies] for p in chosen}
    for arg in policy_args or []:
        problem, sep, ids = arg.partition("=")
        if not sep or not ids:
            raise UsageError(f"--policy takes PROBLEM=POLICY[,POLICY], not {arg!r}")
        if problem not in MODELS:
            raise UsageError(f"--policy: unknown problem {problem!r}; known: {', '.join(MODELS)}")
        known = [x.id for x in MODELS[problem].policies]
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        for i in wanted:
            if i not in known:
                raise UsageError(f"--policy: {problem} has no policy {i!r}; it has {', '.join(known)}")
        if problem not in chosen:
            chosen.append(problem)
        policies[problem] = wanted
    return Selection(chosen, policies)


def own_policies(kernel: str | None) -> dict[str, str | None]:
    """problem → the policy the given kernel runs, None when its release cannot tell."""
    if not kernel:
        return {p: None for p in MODELS}
    try:
        release = parse_release(kernel)
    except UsageError:
        return {p: None for p in MODELS}
    rules = {r.id: r for r in load_rules()}
    out = {}
    for problem, model in MODELS.items():
        status = kernel_status(release, rules[problem].kernel).status if problem in rules else "unknown"
        fixed = _OWN.get(status)
        out[problem] = None if fixed is None else next(p.id for p in model.policies if p.fixed == fixed)
    return out


def replay(w: Workload, selection: Selection, kernel: str | None = None) -> dict:
    own = own_policies(kernel or w.kernel)
    results, observed, skipped = [], {}, {}
    for problem in selection.problems:
        model = MODELS[problem]
        reason = model.not_applicable(w)
        if reason:
            skipped[problem] = reason
            continue
        # A synthetic workload (w.params: its description) has nothing observed.
        observed[problem] = {} if w.params else _plain(model.observed(w))
        for pid in selection.policies[problem]:
            policy = model.policy(pid)
            results.append({
                "problem": problem,
                "policy": policy.id,
                "kernels": policy.kernels,
                "code_path": policy.code_path,
                "fixed": policy.fixed,
                "own_kernel": own.get(problem) == policy.id,
                "metrics": _plain(model.simulate(w, policy)),
            })
    return {"workload": w.summary(), "observed": observed, "not_applicable": skipped, "results": results}


def _plain(metrics: dict) -> dict:
    """numpy scalars → Python numbers, for JSON."""
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in metrics.items()}
