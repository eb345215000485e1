"""Run a workload under each problem's policies; mark the one the capture's own kernel
follows, next to what the capture shows. Which kernels run which policy comes from
each problem's rule file (its [kernel] table), the one place those versions are kept."""

from __future__ import annotations

from dataclasses import dataclass

from advisor import problems
from advisor.errors import UsageError
from advisor.kernel import AffectedRange, kernel_status, parse_release
from advisor.replay.workload import Workload
from advisor.rules import load_rules

MODELS = problems.models()

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


def kernel_ranges() -> dict[str, AffectedRange]:
    """problem → its affected kernel range, from the bundled rule files."""
    return {r.id: r.kernel for r in load_rules(bundled_only=True) if r.id in MODELS}


def own_policies(kernel: str | None, ranges: dict[str, AffectedRange] | None = None) -> dict[str, str | None]:
    """problem → the policy the given kernel runs, None when its release cannot tell."""
    if not kernel:
        return {p: None for p in MODELS}
    try:
        release = parse_release(kernel)
    except UsageError:
        return {p: None for p in MODELS}
    ranges = ranges if ranges is not None else kernel_ranges()
    out = {}
    for problem, model in MODELS.items():
        status = kernel_status(release, ranges[problem]).status if problem in ranges else "unknown"
        fixed = _OWN.get(status)
        out[problem] = None if fixed is None else next(p.id for p in model.policies if p.fixed == fixed)
    return out


# Own-kernel replay further than this from what the capture shows is flagged: its
# before/after figures are then estimates to read with that error in mind.
FIDELITY_TOLERANCE = 0.25


def replay(w: Workload, selection: Selection, kernel: str | None = None, measured: dict[str, dict] | None = None) -> dict:
    """Every selected problem's policies on the workload. `measured`: problem → the
    metrics its rule measured on the same capture, which fill the observed column wherever
    a replayed metric has the same name."""
    ranges = kernel_ranges()
    own = own_policies(kernel or w.kernel, ranges)
    results, observed, skipped, warnings = [], {}, {}, []
    for problem in selection.problems:
        model = MODELS[problem]
        reason = model.not_applicable(w)
        if reason:
            skipped[problem] = reason
            continue
        said, shown_by = _policy_shown(problem, model, w, own, kernel)
        warnings += said
        rows = []
        for pid in selection.policies[problem]:
            policy = model.policy(pid)
            rows.append({
                "problem": problem,
                "policy": policy.id,
                "kernels": _label(ranges.get(problem), policy.fixed),
                "code_path": policy.code_path,
                "fixed": policy.fixed,
                "own_kernel": own.get(problem) == policy.id,
                # why the own-kernel policy is this one when the capture, not the release, says so
                "own_kernel_shown": shown_by if shown_by and own.get(problem) == policy.id else None,
                "metrics": _plain(model.simulate(w, policy)),
            })
        # A synthetic workload (w.params: its description) has nothing observed.
        names = {k for r in rows for k in r["metrics"]}
        seen = {} if w.params else _plain(model.observed(w))
        finding = (measured or {}).get(problem) or {}
        at_least = {}
        if finding.get("still_running"):
            # The finding timed a call that had not returned by the capture's end: a lower
            # bound, which no error can be computed against, but which a prediction below
            # it misses for certain.
            at_least = {k: v for k, v in finding.items() if k in names and k.endswith("_seconds") and _number(v)}
            finding = {}
        seen.update({k: v for k, v in finding.items() if k in names and _number(v)})
        observed[problem] = seen
        for r in rows:
            if r["own_kernel"]:
                r["own_kernel_error"] = own_kernel_error(r["metrics"], seen)
                warnings += [f"{problem}: replayed under this kernel's own policy ({r['policy']}), {m} is "
                             f"{e['predicted']:.4g} against {e['observed']:.4g} in the capture ({e['error']:+.0%}): "
                             f"read this problem's before/after figures with that error in mind"
                             for m, e in r["own_kernel_error"].items() if abs(e["error"]) > FIDELITY_TOLERANCE]
        if at_least:
            warnings += _below_lower_bound(problem, rows, at_least)
        if rows and not any(r["own_kernel"] for r in rows):
            warnings += _every_policy_misses(problem, rows, seen)
        results += rows
    if warnings and w.complete_from_ts is not None:
        warnings.append(f"the capture is missing some CPUs' events before +{(w.complete_from_ts - w.start_ts) / 1e9:.3f} s "
                        "(their buffers were overwritten): part of these errors may come from writes, requests and "
                        "completions the replay could not see")
    if warnings and w.shared_device:
        warnings.append(f"{w.shared_device}: part of these errors may come from those writes")
    return {"workload": w.summary(), "observed": observed, "not_applicable": skipped, "results": results, "warnings": warnings}


def _policy_shown(problem: str, model, w: Workload, own: dict[str, str | None], kernel: str | None) -> tuple[list[str], str | None]:
    """Where the capture shows which policy its kernel ran and its release says otherwise
    (a vendor or custom kernel without a fix, or with it backported), that policy is the
    own-kernel one, unless `kernel` (--kernel) names the kernel. Returns the warnings and
    the evidence when the capture decided."""
    shown = model.shown_policy(w) if model.shown_policy and not w.params else None
    if not shown or own.get(problem) == shown[0]:
        return [], None
    policy, evidence = shown
    if kernel:
        return [f"{problem}: {evidence}, yet --kernel {kernel} runs {own.get(problem) or 'an unknown policy'}: "
                "the row marked as this kernel's is the one --kernel names"], None
    said = f"release {w.kernel} implies {own[problem]}" if own.get(problem) else "the kernel's release cannot tell"
    own[problem] = policy
    return [f"{problem}: {evidence}; {said}, so this capture's kernel is replayed as {policy}"], evidence


def _every_policy_misses(problem: str, rows: list[dict], seen: dict) -> list[str]:
    """With the kernel's policy unknown, no row is the own-kernel one: a metric every
    policy puts more than the tolerance from the capture is the replay's error whichever
    policy the kernel runs."""
    out = []
    for m, each in missed_by_every_policy(rows, seen).items():
        values = " and ".join(f"{e['predicted']:.4g} ({r['policy']})" for e, r in zip(each, rows))
        out.append(f"{problem}: the kernel's policy is unknown, and every policy misses {m}: {values} against "
                   f"{each[0]['observed']:.4g} in the capture: read this problem's before/after figures with that error in mind")
    return out


def missed_by_every_policy(rows: list[dict], seen: dict) -> dict[str, list[dict]]:
    """metric → each row's error, for the metrics every row puts beyond the tolerance."""
    errors = [own_kernel_error(r["metrics"], seen) for r in rows]
    if not errors:
        return {}
    return {m: [e[m] for e in errors] for m in errors[0]
            if all(m in e and abs(e[m]["error"]) > FIDELITY_TOLERANCE for e in errors)}


def _below_lower_bound(problem: str, rows: list[dict], at_least: dict) -> list[str]:
    """What is known of a call still running when the capture ended: it ran at least so
    long. The own kernel's prediction is checked against that (the others, where the
    release gives no own policy)."""
    own = [r for r in rows if r["own_kernel"]] or rows
    said = [f"{problem}: the capture's longest call had not returned when it ended ({m} at least {v:.3f} s): "
            "there is no observed value to compute the replay's error against"
            for m, v in at_least.items()]
    for m, v in at_least.items():
        low = [r for r in own if _number(r["metrics"].get(m)) and r["metrics"][m] < v]
        if low:
            policies = ", ".join(r["policy"] for r in low)
            values = ", ".join(f"{r['metrics'][m]:.4g}" for r in low)
            said.append(f"{problem}: {policies} replays {m} as {values} s, shorter than the {v:.3f} s the capture shows "
                        "it already ran: read this problem's before/after figures with that error in mind")
    return said


def own_kernel_error(predicted: dict, observed: dict) -> dict:
    """metric → predicted, observed and (predicted - observed) / observed, for every
    metric both give a nonzero number for (counts, durations, bytes; not flags)."""
    out = {}
    for k, obs in observed.items():
        pred = predicted.get(k)
        if _number(pred) and _number(obs) and obs:
            out[k] = {"predicted": pred, "observed": obs, "error": round((pred - obs) / obs, 4)}
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def measure(con, problems: list[str], views) -> dict[str, dict]:
    """problem → the metrics its rule measures on this capture (the replay's observed column)."""
    from advisor.rules.engine import analyze  # noqa: PLC0415

    rules = {r.id: r for r in load_rules(bundled_only=True)}
    return {f.rule.id: f.metrics for f in analyze(con, [rules[p] for p in problems if p in rules], None, views)}


def replay_store(con, label: str, problems: list[str] | None = None, policies: list[str] | None = None,
                 kernel: str | None = None, views=None) -> dict | None:
    """The replay of a store's workload with its own measurements as the observed column;
    None when the capture has no page dirtying to replay (`nothing_to_replay` says why).
    `views`: the connection's attached views, when the caller has them."""
    from advisor.replay.workload import from_store, replayed_views  # noqa: PLC0415
    from advisor.views import attach  # noqa: PLC0415

    views = views or attach(con)
    selection = select(problems, policies)
    # What the capture measured, on the same devices and pages as the workload replayed.
    with replayed_views(con, views) as left_out:
        workload = from_store(con, label, views=views, left_out=left_out, kernel=kernel)
        if not len(workload.dirty_ts):
            return None
        observed = measure(con, selection.problems, views)
    return replay(workload, selection, kernel, observed)


def nothing_to_replay(con) -> str:
    """Why `replay_store` found no page dirtying in this store."""
    from advisor.views import attach  # noqa: PLC0415

    views = attach(con)
    unmet = views.unmet(["dirtying.index"])
    if unmet and views.in_ticks("dirtying"):
        return f"the page dirtying cannot be replayed on a clock in ticks: {unmet[0].why}"
    if unmet:
        return f"no page-dirtying events to replay: {unmet[0].why}"
    return "no page-dirtying events (writeback:writeback_dirty_folio/_page) to replay"


def _plain(metrics: dict) -> dict:
    """numpy scalars → Python numbers, for JSON."""
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in metrics.items()}


def _label(rng: AffectedRange | None, fixed: bool) -> str:
    if rng is None:
        return "fixed kernels" if fixed else "affected kernels"
    return rng.policy_labels()[1 if fixed else 0]


def synthetic(description: str) -> Workload:
    """A synthetic workload (`--workload NAME[:key=value,...]`) among the problems' own."""
    from advisor.replay import synthetic as builder  # noqa: PLC0415

    return builder.build(description, problems.synthetic_workloads())
