"""A finding quotes the replay: the rule's [replay] sentence filled with what the
problem's policy model predicts for this capture's workload, before and after the fix
("this snapshot takes about 122 s before the fix and 6.9 s with it")."""

from __future__ import annotations

from advisor.rules import Rule
from advisor.rules.loader import RuleFileError

# Verdicts worth quantifying: the problem is, or may be, in this capture.
QUOTED = ("affected", "at-risk", "signature-without-known-bug")
_OWN = {True: "it runs the fixed policy", False: "it runs the policy before the fix", None: "policy unknown"}


def quote_replays(con, label: str, doc: dict, rules: list[Rule], replayed: dict | None = None) -> None:
    """Add `replay` (and its sentence in `message`) to the findings that want one.
    `replayed`: a replay document the caller already has (the report's), used when it
    covers every quoted problem, so the workload is not extracted and replayed twice."""
    by_id = {r.id: r for r in rules}
    wanted = [f for f in doc["findings"] if f["verdict"] in QUOTED and by_id[f["rule"]].replay is not None]
    if not wanted:
        return
    # The engine and its models: loaded only when a finding is quoted.
    from advisor.analyze import replay as engine
    from advisor.analyze.replay import MODELS

    wanted = [f for f in wanted if f["rule"] in MODELS]
    problems = [f["rule"] for f in wanted]
    result = replayed if replayed is not None and _covers(replayed, problems) else _replay(con, label, problems, doc)
    if result is None:
        return
    for f in wanted:
        quote = by_id[f["rule"]].replay
        rows = [r for r in result["results"] if r["problem"] == f["rule"]]
        if not rows:
            f["replay"] = {"not_applicable": result["not_applicable"].get(f["rule"])}
            continue
        before = next(r for r in rows if not r["fixed"])
        after = next(r for r in rows if r["fixed"])
        own = next((r["fixed"] for r in rows if r["own_kernel"]), None)
        shown = next((r["own_kernel_shown"] for r in rows if r["own_kernel"] and r.get("own_kernel_shown")), None)
        if f["code_path"] and all(c["holds"] for c in f["code_path"]):
            shown = None  # the finding's kernel reason has said what the capture shows
        values = {"before": before["metrics"].get(quote.metric), "after": after["metrics"].get(quote.metric),
                  "kernel": doc["kernel"]["release"] or "unknown", "own_kernel": _OWN[own] + (f", as the capture shows: {shown}" if shown else "")}
        f["replay"] = {"metric": quote.metric, "before_policy": before["policy"], "after_policy": after["policy"],
                       "before": values["before"], "after": values["after"], "own_kernel_fixed": own,
                       "device": result["workload"]["device"]["source"],
                       "assumptions": result["workload"]["assumptions"]}
        own_row = next((r for r in rows if r["own_kernel"]), None)
        errors = (own_row or {}).get("own_kernel_error", {})
        f["replay"]["own_kernel_error"] = errors
        if values["before"] is not None and values["after"] is not None:
            f["message"] += " " + _sentence(by_id[f["rule"]], values)
            off = {m: e for m, e in errors.items() if abs(e["error"]) > engine.FIDELITY_TOLERANCE}
            missed = engine.missed_by_every_policy(rows, result["observed"].get(f["rule"], {})) if own_row is None else {}
            if missed:
                f["message"] += (" Caution: whichever policy this kernel runs, the model misses what the capture shows ("
                                 + "; ".join(_missed(m, each) for m, each in missed.items()) + "), so these figures are rough estimates.")
            if off:
                f["message"] += (" Caution: replayed under this kernel's own policy, the model misses what the capture shows ("
                                 + "; ".join(f"{m} {e['predicted']:.4g} vs {e['observed']:.4g}, {e['error']:+.0%}" for m, e in off.items())
                                 + "), so these figures are rough estimates.")


def _missed(metric: str, each: list[dict]) -> str:
    predicted = " or ".join(f"{e['predicted']:.4g}" for e in each)
    return f"{metric} {predicted} vs {each[0]['observed']:.4g}"


def _covers(replayed: dict, problems: list[str]) -> bool:
    done = {r["problem"] for r in replayed["results"]} | set(replayed["not_applicable"])
    return set(problems) <= done


def _replay(con, label: str, problems: list[str], doc: dict) -> dict | None:
    """The quoted problems' replay, or None when there is nothing to replay."""
    from advisor.analyze import replay as engine

    # Only a release the user named (--kernel) overrides what the capture shows of its policy.
    kernel = doc["kernel"]["release"] if doc["kernel"]["from"] == "--kernel" else None
    return engine.replay_store(con, label, problems, None, kernel) if problems else None


def _sentence(rule: Rule, values: dict) -> str:
    try:
        return rule.replay.text.format(**values)
    except (KeyError, ValueError, IndexError) as e:
        raise RuleFileError(f"{rule.source_file}: [replay] text uses an unknown or badly formatted value: {e}") from None
