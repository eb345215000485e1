"""Read and check rule files: the bundled ones (advisor/problems/<package>/rule.toml)
and those of a directory of your own (<id>.toml).

A mistake in a rule file is reported with the file and the key, once, at load
time, so that a broken rule never turns into a silent verdict.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib.resources.abc import Traversable
from pathlib import Path

from advisor import problems
from advisor.errors import UsageError
from advisor.kernel import AffectedRange, StableFix, VendorFix, upstream
from advisor.rules.model import (
    ADDED_MESSAGES,
    OPERATORS,
    QUERY_CLOCKS,
    VERDICTS,
    Commit,
    Condition,
    Evidence,
    Metric,
    Query,
    ReplayQuote,
    Rule,
    Setting,
    Threshold,
)
from advisor.views import check_need

ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
EVENT_RE = re.compile(r"^[a-z0-9_]+:[a-z0-9_]+$")


class RuleFileError(UsageError):
    """A rule file that does not follow the format."""


def user_rules_dir() -> Path | None:
    """$WRITEBACK_ADVISOR_RULES: a directory of rule files that add to or replace the bundled ones."""
    env = os.environ.get("WRITEBACK_ADVISOR_RULES")
    return Path(env) if env else None


def load_rules(directory: Path | None = None, only: list[str] | None = None, bundled_only: bool = False) -> list[Rule]:
    """The bundled rules, then the rule files of `directory` (or $WRITEBACK_ADVISOR_RULES):
    a file there whose id is a bundled rule's replaces it, any other adds a rule.
    `only` picks ids (unknown → error)."""
    rules = {r.id: r for r in (load_rule(f, problem) for problem, f in problems.rule_files())}
    directory = None if bundled_only else (directory or user_rules_dir())
    if directory is not None:
        if not directory.is_dir():
            raise RuleFileError(f"{directory}: not a directory of rule files")
        files = sorted(directory.glob("*.toml"))
        if not files:
            raise RuleFileError(f"{directory}: no rule files (*.toml)")
        for f in files:
            rule = load_rule(f)
            rules[rule.id] = rule
    if not only or only == ["all"]:
        return list(rules.values())
    unknown = [i for i in only if i not in rules]
    if unknown:
        raise UsageError(f"unknown rule id {unknown[0]!r}: known rules are {', '.join(sorted(rules))}")
    return [rules[i] for i in only]


def load_rule(path: Path | Traversable, problem: str | None = None) -> Rule:
    """One rule file. `problem`: the id a bundled rule.toml must carry; a file of your own
    is named after its id (<id>.toml)."""
    shown = _shown(path, problem)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RuleFileError(f"{shown}: {e}") from None
    return _Reader(shown, doc, problem or Path(path.name).stem).rule()


def _shown(path: Path | Traversable, problem: str | None) -> str:
    """How messages name a rule file: its path, or for a bundled one inside an archive
    its place in the package."""
    if isinstance(path, Path):
        return str(path)
    return f"advisor/problems/{problems.PACKAGES[problem]}/rule.toml" if problem else str(path)


class _Reader:
    def __init__(self, path: str, doc: dict, expected_id: str):
        self.path, self.doc, self.expected_id = path, doc, expected_id

    def fail(self, key: str, what: str):
        raise RuleFileError(f"{self.path}: [{key}] {what}")

    def get(self, table: dict, key: str, kind: type, where: str, default=None):
        value = table.get(key, default)
        if value is None:
            self.fail(where, f"missing {key!r}")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind):
            self.fail(where, f"{key!r} must be a {kind.__name__}")
        return value

    def rule(self) -> Rule:
        d = self.doc
        for old in ("events", "spans"):
            if old in d:
                self.fail(old, "rules no longer name events: each [[queries]] lists the views it reads in `needs` "
                               "(the views: advisor sql TRACE 'SELECT view, source FROM capture_views')")
        rid = self.get(d, "id", str, "top")
        if not ID_RE.match(rid) or rid != self.expected_id:
            self.fail("top", f"id {rid!r} must be a lower-case slug equal to {self.expected_id!r} (the file name)")
        thresholds = self.thresholds()
        metrics = tuple(
            Metric(name, self.get(m, "unit", str, f"metrics.{name}"), self.get(m, "text", str, f"metrics.{name}"))
            for name, m in self.get(d, "metrics", dict, "top").items()
        )
        verdict = self.get(d, "verdict", dict, "top")
        rec = self.get(d, "recommendation", dict, "top")
        rule = Rule(
            id=rid,
            title=self.get(d, "title", str, "top"),
            summary=self.get(d, "summary", str, "top"),
            source_file=self.path,
            fix=self.commits("fix"),
            regressing=self.commits("regressing", optional=True),
            kernel=self.kernel(),
            filesystems=tuple(d.get("filesystems", [])),
            metrics=metrics,
            queries=tuple(self.query(q) for q in self.get(d, "queries", list, "top")),
            thresholds=thresholds,
            pattern=self.conditions(verdict, "pattern", thresholds, metrics),
            signature=self.conditions(verdict, "signature", thresholds, metrics),
            signature_when_measured=self.conditions(verdict, "signature_when_measured", thresholds, metrics, optional=True),
            code_path=self.conditions(verdict, "code_path", thresholds, metrics, optional=True),
            code_path_text=self.code_path_text(verdict),
            unresolved=self.conditions(verdict, "unresolved", thresholds, metrics, optional=True),
            messages=self.messages(),
            upgrade=self.get(rec, "upgrade", str, "recommendation"),
            settings=tuple(
                Setting(**{k: self.get(s, k, str, "recommendation.settings") for k in ("setting", "value", "reason", "risk")})
                for s in rec.get("settings", [])
            ),
            other_causes=self.get(rec, "other_causes", str, "recommendation"),
            evidence=tuple(
                Evidence(self.get(e, "title", str, "evidence"), self.get(e, "sql", str, "evidence"), int(e.get("limit", 10)),
                         self.needs(e, "evidence"))
                for e in d.get("evidence", [])
            ),
            references=tuple(d.get("references", [])),
            blktrace=d.get("blktrace", ""),
            replay=self.replay(),
        )
        return rule

    def replay(self) -> ReplayQuote | None:
        table = self.doc.get("replay")
        if table is None:
            return None
        if not isinstance(table, dict):
            self.fail("replay", "must be a table")
        return ReplayQuote(self.get(table, "metric", str, "replay"), self.get(table, "text", str, "replay"))

    def commits(self, key: str, optional: bool = False) -> tuple[Commit, ...]:
        items = self.doc.get(key, [])
        if not items and not optional:
            self.fail(key, "at least one commit is needed")
        out = []
        for c in items:
            sha = self.get(c, "commit", str, key)
            if not re.fullmatch(r"[0-9a-f]{12,40}", sha):
                self.fail(key, f"commit {sha!r} is not a hex SHA")
            out.append(Commit(sha, self.get(c, "subject", str, key), c.get("mainline"), self.get(c, "source", str, key)))
        return tuple(out)

    def kernel(self) -> AffectedRange:
        k = self.get(self.doc, "kernel", dict, "top")
        try:
            for v in (k.get("introduced_in"), k["fixed_in"], *(s["fixed_in"] for s in k.get("stable", []))):
                if v is not None:
                    upstream(v)
            return AffectedRange(
                introduced_in=k.get("introduced_in"),
                fixed_in=k["fixed_in"],
                stable=tuple(
                    StableFix(s["series"], s["fixed_in"], s["source"], s.get("confidence", "confirmed")) for s in k.get("stable", [])
                ),
                vendor=tuple(
                    VendorFix(v["vendor"], v["series"], v["fixed_build"], v["source"], v.get("confidence", "confirmed"))
                    for v in k.get("vendor", [])
                ),
            )
        except (KeyError, ValueError) as e:
            self.fail("kernel", f"bad or missing value: {e}")

    def query(self, q: dict) -> Query:
        clock = self.get(q, "clock", str, "queries", default="ns")
        if clock not in QUERY_CLOCKS:
            self.fail("queries", f"clock {clock!r} must be one of {', '.join(QUERY_CLOCKS)}")
        optional = self.needs(q, "queries", "optional") if "optional" in q else ()
        return Query(self.get(q, "sql", str, "queries"), self.needs(q, "queries"), clock, optional)

    def needs(self, table: dict, where: str, key: str = "needs") -> tuple[str, ...]:
        """The views a query reads: "fsync_ops" or "fsync_ops.dur_ns" (advisor/views)."""
        needs = tuple(self.get(table, key, list, where))
        for n in needs:
            why = check_need(n) if isinstance(n, str) else f"{n!r} is not a string"
            if why:
                self.fail(where, f"{key}: {why}")
        return needs

    def thresholds(self) -> dict[str, Threshold]:
        out = {}
        for name, t in self.doc.get("thresholds", {}).items():
            out[name] = Threshold(name, self.get(t, "value", float, f"thresholds.{name}"), self.get(t, "text", str, f"thresholds.{name}"))
        return out

    def conditions(self, verdict: dict, key: str, thresholds: dict, metrics: tuple[Metric, ...],
                   optional: bool = False) -> tuple[Condition, ...]:
        names = {m.name for m in metrics}
        out = []
        if optional and key not in verdict:
            return ()
        for item in self.get(verdict, key, list, "verdict"):
            if not (isinstance(item, list) and len(item) == 3):
                self.fail(f"verdict.{key}", f"each condition is [metric, operator, threshold], got {item!r}")
            metric, op, ref = item
            if metric not in names:
                self.fail(f"verdict.{key}", f"unknown metric {metric!r} (declare it under [metrics])")
            if op not in OPERATORS:
                self.fail(f"verdict.{key}", f"operator {op!r} is not one of {' '.join(OPERATORS)}")
            if isinstance(ref, str) and ref not in thresholds:
                self.fail(f"verdict.{key}", f"unknown threshold {ref!r}")
            out.append(Condition(metric, op, ref if isinstance(ref, str) else float(ref)))
        return tuple(out)

    def code_path_text(self, verdict: dict) -> str:
        if "code_path" not in verdict:
            return ""
        return self.get(verdict, "code_path_text", str, "verdict")

    def messages(self) -> dict[str, str]:
        msgs = self.get(self.doc, "messages", dict, "top")
        for verdict in msgs:
            # Optional: "not-exercised", the wording of not-affected when the workload pattern
            # is absent; "unresolved", said when the verdict's unresolved conditions hold;
            # "still-running", said when the metric still_running is 1.
            if verdict not in VERDICTS and verdict not in ADDED_MESSAGES:
                self.fail("messages", f"{verdict!r} is not a verdict ({', '.join(VERDICTS)})")
        for verdict in ("affected", "at-risk", "not-affected", "signature-without-known-bug"):
            if verdict not in msgs:
                self.fail("messages", f"missing the {verdict!r} message")
        return dict(msgs)
