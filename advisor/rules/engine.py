"""Run rules over a store: views → metrics (the rule's SQL) → checks → verdict → finding.

The engine is generic: everything about a problem is in its rule file. Every metric
is computed when the views its query reads can be filled from this capture; the
others are unmeasured, and the finding names what each would need and how to record it.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field

import duckdb

from advisor.kernel import KernelRelease, KernelStatus, kernel_status
from advisor.rules.loader import RuleFileError
from advisor.rules.model import Rule
from advisor.rules.verdict import all_hold, check, decide
from advisor.views import Views, attach, filesystem_requests, record_command


@dataclass
class Finding:
    rule: Rule
    verdict: str
    kernel: KernelStatus
    metrics: dict
    signature: list
    pattern: list
    evidence: list[dict]
    unmeasured: list[dict]  # {metric, text, why, record}
    missing_events: list[str]
    capture_command: str | None
    message: str
    filesystems: str = ""  # what the capture shows (for not-applicable)
    measured_from: dict[str, list[str]] = field(default_factory=dict)  # metric → the views its query read
    # Metrics measured without an optional view the capture cannot fill: {metric, text, without, record}
    partial: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)  # the views the rule read, and their sources
    code_path: list = field(default_factory=list)  # the checks that show the code before the fix, where the rule has them
    build_lacks_fix: bool = False  # its release has the fix, yet the capture shows the code before it

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
            "unmeasured": self.unmeasured,
            "measured_from": self.measured_from,
            "partial": self.partial,
            "signature": [c.as_dict() for c in self.signature],
            "code_path": [c.as_dict() for c in self.code_path],
            "pattern": [c.as_dict() for c in self.pattern],
            "evidence": self.evidence,
            "missing_events": self.missing_events,
            "capture_command": self.capture_command,
            "sources": self.sources,
            "filesystems": list(r.filesystems),
            "capture_filesystems": self.filesystems,
            "recommendation": {
                "upgrade": _rebuild(r) if self.build_lacks_fix else r.upgrade,
                "upgrade_to": list(self.kernel.upgrade_to),
                "settings": [vars(s) for s in r.settings],
                "other_causes": r.other_causes if self.verdict == "signature-without-known-bug" else None,
            },
            "fix": [vars(c) for c in r.fix],
            "regressing": [vars(c) for c in r.regressing],
            "references": list(r.references),
        }


def analyze(con, rules: list[Rule], release: KernelRelease | None, views: Views | None = None) -> list[Finding]:
    """Every rule's finding. Rules that count block requests count the filesystem's
    devices only (advisor.views.stacking: a loop device's writes, not those of the device
    under its backing file again), and their message says which were left out."""
    views = views or attach(con)
    if not any(_applicable(r, views) and _BLOCK in _views_of(r.needs) for r in rules):
        return [run_rule(con, rule, release, views) for rule in rules]
    with filesystem_requests(con, views) as choice:
        findings = [run_rule(con, rule, release, views) for rule in rules]
    if choice and choice.note():
        for f in findings:
            if any(_BLOCK in _views_of(needs) for needs in f.measured_from.values()):
                note = choice.note()
                f.message += f" {note[0].upper()}{note[1:]}."
    return findings


_BLOCK = "block_requests"


def _views_of(needs) -> set[str]:
    return {n.partition(".")[0] for n in needs}


def _applicable(rule: Rule, views: Views) -> bool:
    """Not a filesystem-specific rule on a capture that shows none of its filesystems."""
    absent = [fs for fs in rule.filesystems if views.filesystems.knows_absent(fs)]
    return not rule.filesystems or len(absent) < len(rule.filesystems)


def run_rule(con, rule: Rule, release: KernelRelease | None, views: Views | None = None) -> Finding:
    views = views or attach(con)
    status = kernel_status(release, rule.kernel)
    applicable = _applicable(rule, views)
    metrics: dict = {m.name: None for m in rule.metrics}
    unmeasured: dict[str, dict] = {}
    measured_from: dict[str, list[str]] = {}
    partial: dict[str, dict] = {}
    if applicable:
        measured: set[str] = set()
        for q in rule.queries:
            # An optional view the capture has no source for is an empty view, which the
            # query reads as no rows; one that has rows it cannot use (a column it does not
            # show, a clock in ticks) would be read as if it could: that is unmet.
            without = views.unmet(q.optional, q.clock)
            unmet = views.unmet(q.needs, q.clock) + [u for u in without if views.built[u.need.partition(".")[0]].available]
            if unmet:
                for name in _columns(con, rule, q.sql):
                    if name not in measured and name not in unmeasured:
                        unmeasured[name] = {"metric": name, "text": _text(rule, name), "why": "; ".join(u.why for u in unmet),
                                            "record": list(dict.fromkeys(e for u in unmet for e in u.record))}
                continue
            lacking = {u.need for u in without}
            for name, value in _one_row(con, rule, q.sql).items():
                if name in measured:
                    continue  # an earlier (preferred) query measured it
                metrics[name] = _clean(value)
                measured_from[name] = [*q.needs, *(n for n in q.optional if n not in lacking)]
                if without:
                    partial[name] = {"metric": name, "text": _text(rule, name), "without": "; ".join(u.why for u in without),
                                     "record": list(dict.fromkeys(e for u in without for e in u.record))}
                measured.add(name)
                unmeasured.pop(name, None)
        for name in measured:
            unmeasured.pop(name, None)
    unknown = set(unmeasured)
    if _unresolved(rule, metrics):
        # A call whose return the capture lost: its duration and what ran during it are
        # unknown, not absent (a sync(2) that ran 2 s while another CPU dropped events).
        unknown |= {name for name, value in metrics.items() if value is None}
    signature = check(rule, rule.signature, metrics, unknown)
    signature += [c for c in check(rule, rule.signature_when_measured, metrics, unknown) if c.holds is not None]
    pattern = check(rule, rule.pattern, metrics, unknown)
    code_path = check(rule, rule.code_path, metrics, unknown)
    lacks_fix = False
    if all_hold(code_path) and status.status != "affected":
        lacks_fix = status.status == "fixed"
        status = _shown_affected(rule, status, metrics)
    verdict = decide(status, applicable, signature, pattern)
    # Of several evidence items with one title, the first whose views are there is shown.
    shown: dict[str, object] = {}
    for e in rule.evidence:
        if applicable and e.title not in shown and not views.unmet(e.needs):
            shown[e.title] = e
    evidence = [_evidence(con, rule, e) for e in shown.values()]
    missing = list(dict.fromkeys(e for u in (*unmeasured.values(), *partial.values()) for e in u["record"]))
    # The command records a new capture: the events this rule already reads here, too.
    kept = [e for n in dict.fromkeys(need.partition(".")[0] for need in rule.needs) for e in views.built[n].events_used()]
    shown = views.filesystems.describe()
    finding = Finding(
        rule=rule,
        verdict=verdict,
        kernel=status,
        metrics=metrics,
        signature=signature,
        pattern=pattern,
        evidence=evidence,
        unmeasured=list(unmeasured.values()),
        missing_events=missing,
        capture_command=record_command(list(dict.fromkeys(kept + missing))) if missing else None,
        message="",
        filesystems=shown,
        measured_from=measured_from,
        partial=list(partial.values()),
        sources=[{"view": n, "source": views.built[n].source, "lacks": views.built[n].lacks or None}
                 for n in dict.fromkeys(need.partition(".")[0] for need in rule.needs)],
        code_path=code_path,
        build_lacks_fix=lacks_fix,
    )
    finding.message = _message(rule, finding, release)
    unseen = [fs for fs in rule.filesystems if fs not in views.filesystems.shown]
    if applicable and rule.filesystems and len(unseen) == len(rule.filesystems) and verdict != "insufficient-data":
        # An fsync-only capture: its calls may have been on any filesystem.
        finding.message += (f" The capture shows no filesystem ({shown}: none of its events names one), so this "
                            f"holds only if the activity was on {' or '.join(rule.filesystems)}.")
    return finding


def _shown_affected(rule: Rule, status: KernelStatus, metrics: dict) -> KernelStatus:
    """The capture shows the code before the fix running, so the kernel is affected
    whatever its release says (6.1.192 built with the sync fix reverted: its flusher
    waited on the pages of 627 of the 627 inodes it wrote in sync's WB_SYNC_ALL work)."""
    shown = _Values().vformat(rule.code_path_text, (), dict(metrics))
    if status.status != "fixed":
        return KernelStatus("affected", f"Whatever its release, this kernel runs the code before the fix: {shown}")
    return KernelStatus("affected", f"{status.reason.rstrip('.')}, yet this capture shows the code before the fix running: "
                                    f"{shown}, so this build does not have the fix (reverted, patched over, or a backport that missed it)")


def _rebuild(rule: Rule) -> str:
    if not rule.fix:
        return rule.upgrade
    fix = rule.fix[0]
    return (f"This build's release should contain {fix.sha[:12]} (\"{fix.subject}\") but runs the code before it: look for a "
            "revert or a conflicting patch in its source, and rebuild with the fix (or run the distribution's unmodified kernel).")


def _columns(con, rule: Rule, sql: str) -> list[str]:
    """The metrics a query returns, without running it (its views exist, possibly empty)."""
    try:
        return [d[0] for d in con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description]
    except duckdb.Error as e:
        raise RuleFileError(f"{rule.source_file}: a [[queries]] query failed: {str(e).splitlines()[0]}") from None


def _text(rule: Rule, name: str) -> str:
    m = rule.metric(name)
    return m.text if m else name


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
        cols = [d[0] for d in cur.description]
        # How many rows the limit left out, so that a cut table can say so.
        total = len(rows) if len(rows) < ev.limit else con.execute(f"SELECT count(*) FROM ({ev.sql.strip().rstrip(';')}\n)").fetchone()[0]
    except duckdb.Error as e:
        raise RuleFileError(f"{rule.source_file}: evidence {ev.title!r} failed: {str(e).splitlines()[0]}") from None
    return {"title": ev.title, "columns": cols, "rows": [[_clean(v) for v in r] for r in rows], "total_rows": total}


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
    """str.format over metrics where an unmeasured value prints as "n/a" whatever its
    format, and without the unit the message puts after it: "p50 {fsync_p50_ms:.1f} ms"
    reads "p50 n/a", not "p50 n/a ms"."""

    def format_field(self, value, format_spec):
        if value is None:
            return _UNMEASURED
        return super().format_field(value, format_spec)

    def vformat(self, format_string, args, kwargs):
        text = super().vformat(format_string, args, kwargs)
        return _UNIT_AFTER_UNMEASURED.sub("n/a", text)


_UNMEASURED = "\0n/a\0"
_UNIT_AFTER_UNMEASURED = re.compile("\0n/a\0(?: ms\\b| s\\b| bytes\\b|x\\b)?")


def _unresolved(rule: Rule, metrics: dict) -> bool:
    return bool(rule.unresolved) and all_hold(check(rule, rule.unresolved, metrics)) is True


def _message(rule: Rule, f: Finding, release) -> str:
    if f.verdict == "not-applicable":
        return (f"This problem is specific to {' and '.join(rule.filesystems)}; the capture shows {f.filesystems}, "
                f"so it cannot be this problem. {f.kernel.reason.rstrip('.')}.")
    values = dict(f.metrics)
    values.update({name: t.value for name, t in rule.thresholds.items()})
    values["kernel"] = str(release) if release else "unknown"
    values["kernel_reason"] = f.kernel.reason.rstrip(".") + "."
    values["upgrade_to"] = " or ".join(f.kernel.upgrade_to) or "n/a"
    text = _body(rule, f, values)
    if f.metrics.get("still_running") and "still-running" in rule.messages:
        text += " " + _format(rule, "still-running", values)
    if _unresolved(rule, f.metrics) and "unresolved" in rule.messages:
        text += " " + _format(rule, "unresolved", values)
    if f.unmeasured:
        names = ", ".join(u["metric"] for u in f.unmeasured)
        unmet = list(dict.fromkeys(e for u in f.unmeasured for e in u["record"]))
        how = (f"record {', '.join(unmet)} to measure them" if unmet
               else "recording more events would not add them: each metric's reason says what would")
        text += f" Not measurable from this capture: {names} ({how})."
    without: dict[str, list[str]] = {}
    for u in f.partial:
        without.setdefault(u["without"], []).append(u["metric"])
    for why, names in without.items():
        text += f" {', '.join(names)} {'are' if len(names) > 1 else 'is'} measured without {why}."
    return text


def _body(rule: Rule, f: Finding, values: dict) -> str:
    sig, pat = all_hold(f.signature), all_hold(f.pattern)
    if f.verdict == "insufficient-data":
        measured = [f"{k} {_short(v)}" for k, v in f.metrics.items() if v is not None]
        head = "The capture cannot tell whether this problem is here: neither the workload pattern nor the signature is measurable."
        return head + (f" Measured: {', '.join(measured)}." if measured else "") + f" {values['kernel_reason']}"
    if f.kernel.status == "unknown" and f.verdict == "at-risk":
        # The affected-kernel wording would claim a verdict the version cannot support:
        # state what the capture shows (the neutral template names the numbers and the reason).
        lead = "The problem's signature is in this capture" if sig else "The workload pattern this problem needs is in this capture"
        return f"{lead}, but whether it is the known bug depends on the kernel. " + _format(rule, "not-affected", values)
    exercised = bool(sig or pat)
    if f.verdict == "not-affected" and not exercised and pat is False and "not-exercised" in rule.messages:
        return _format(rule, "not-exercised", values)
    text = _format(rule, f.verdict, values)
    if f.verdict == "not-affected" and f.kernel.status in ("fixed", "not-yet-affected") and exercised:
        text += " The workload has the pattern this bug needs: on an affected kernel it would have been at risk."
    if f.verdict == "at-risk" and sig is None:
        text += " Whether the signature itself is there is not measurable here (see below)."
    return text


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _format(rule: Rule, verdict: str, values: dict) -> str:
    try:
        return _Values().vformat(rule.messages[verdict], (), values)
    except (KeyError, ValueError, IndexError) as e:
        raise RuleFileError(f"{rule.source_file}: [messages] {verdict!r} uses an unknown or badly formatted value: {e}") from None
