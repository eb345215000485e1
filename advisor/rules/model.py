"""What a rule file (advisor/problems/<package>/rule.toml) holds, as typed objects.

A rule is data: the engine knows nothing about any one problem. Adding a sixth
rule is adding a sixth file. See docs/rule-files.md for the file format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from advisor.kernel import AffectedRange

VERDICTS = ("affected", "at-risk", "signature-without-known-bug", "insufficient-data", "not-affected", "not-applicable")
# Messages a rule may add to its verdicts' (advisor.rules.loader checks their names).
ADDED_MESSAGES = ("not-exercised", "unresolved", "still-running")
# Severity order for --fail-on: a finding "reaches" a level when it is at or above it.
SEVERITY = {"affected": 4, "at-risk": 3, "signature-without-known-bug": 2, "insufficient-data": 1, "not-affected": 0,
            "not-applicable": 0}
OPERATORS = (">", ">=", "<", "<=", "==", "!=")
QUERY_CLOCKS = ("ns", "steady", "any")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    mainline: str | None
    source: str


@dataclass(frozen=True)
class Query:
    """SQL over the domain views returning one row whose columns are metrics. `needs`:
    the views (or view.column) it reads; when the capture cannot fill one, its metrics
    are unmeasured (not zero), and the finding says what would measure them. Queries
    come in order of preference: a metric an earlier query measured is kept.

    `clock`: what its metrics need of the timestamps. "ns" (the default): nanoseconds.
    "any": only the order of events (counts, bytes, events inside another's window),
    which a capture timed in clock ticks keeps. "steady": durations compared with each
    other too (the longest call, a ratio of two medians), which holds for a clock that
    counts at a steady rate (x86-tsc cycles) but not for a bare counter.

    `optional`: views that refine its metrics where the capture has them (the calls whose
    writeback a share leaves out); where one cannot be filled, the query reads it empty
    and each of its metrics says what it was measured without."""

    sql: str
    needs: tuple[str, ...]
    clock: str = "ns"
    optional: tuple[str, ...] = ()


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    text: str


@dataclass(frozen=True)
class Threshold:
    name: str
    value: float
    text: str


@dataclass(frozen=True)
class Condition:
    """`metric op threshold`, where threshold is a number or a [thresholds] name."""

    metric: str
    op: str
    threshold: float | str

    def describe(self) -> str:
        return f"{self.metric} {self.op} {self.threshold}"


@dataclass(frozen=True)
class Evidence:
    title: str
    sql: str
    limit: int = 10
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplayQuote:
    """How a finding quotes the replay: which replay metric, and a sentence over
    {own_kernel} (the policy this capture's kernel runs, or "unknown"), {before} and
    {after} (the metric under the policy before and after the fix)."""

    metric: str
    text: str


@dataclass(frozen=True)
class Setting:
    setting: str
    value: str
    reason: str
    risk: str


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    summary: str
    source_file: str
    fix: tuple[Commit, ...]
    regressing: tuple[Commit, ...]
    kernel: AffectedRange
    filesystems: tuple[str, ...]  # empty: any filesystem
    metrics: tuple[Metric, ...]
    queries: tuple[Query, ...]
    thresholds: dict[str, Threshold]
    pattern: tuple[Condition, ...]
    signature: tuple[Condition, ...]
    messages: dict[str, str]
    upgrade: str
    settings: tuple[Setting, ...]
    other_causes: str
    evidence: tuple[Evidence, ...] = ()
    references: tuple[str, ...] = field(default=())
    blktrace: str = ""  # what blktrace alone can and cannot show for this problem
    replay: ReplayQuote | None = None  # how a finding quotes `advisor replay`
    # signature conditions that count only where the capture measures their metric: a
    # direct sign that older kernels have no event for (page waits: 5.2+) sharpens the
    # signature where it is recorded and does not hide it where it cannot be
    signature_when_measured: tuple[Condition, ...] = ()
    # conditions that, where all measured and holding, show the code before the fix running
    # (whatever the release says), and how to say so with the metrics: a build that should
    # have the fix but does not (a revert, a local patch, a backport that missed it)
    code_path: tuple[Condition, ...] = ()
    code_path_text: str = ""
    # conditions that, where all hold, say the capture has a call whose end it cannot show
    # (its return lost with events the kernel dropped): a metric of that call measured as
    # NULL is then unknown, not absent, and the finding says why
    unresolved: tuple[Condition, ...] = ()

    def threshold_value(self, ref: float | str) -> float:
        return self.thresholds[ref].value if isinstance(ref, str) else float(ref)

    @property
    def fix_subject(self) -> str:
        return self.fix[0].subject if self.fix else ""

    @property
    def needs(self) -> tuple[str, ...]:
        """Every view (or view.column) the rule reads."""
        read = [n for q in self.queries for n in (*q.needs, *q.optional)] + [n for e in self.evidence for n in e.needs]
        return tuple(dict.fromkeys(read))

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)
