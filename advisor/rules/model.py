"""What a rule file (rules/<id>.toml) holds, as typed objects.

A rule is data: the engine knows nothing about any one problem. Adding a sixth
rule is adding a sixth file. See rules/README.md for the file format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from advisor.kernel import AffectedRange

VERDICTS = ("affected", "at-risk", "signature-without-known-bug", "insufficient-data", "not-affected")
# Severity order for --fail-on: a finding "reaches" a level when it is at or above it.
SEVERITY = {"affected": 4, "at-risk": 3, "signature-without-known-bug": 2, "insufficient-data": 1, "not-affected": 0}
OPERATORS = (">", ">=", "<", "<=", "==", "!=")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    mainline: str | None
    source: str


@dataclass(frozen=True)
class EventRole:
    """One kind of event the rule reads, under every name kernels have given it.

    `names` are "system:event", newest first; the engine exposes the union of
    those present as the temporary view `ev_<role>`.
    """

    role: str
    names: tuple[str, ...]
    required: bool
    why: str
    filter: str | None = None  # trace-cmd -f filter for `advisor capture`
    # Field types the rule's SQL reads from an optional role: its view still has
    # them (empty) when the capture lacks every name, so the queries bind.
    columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Span:
    """A syscall from enter to exit, e.g. the snapshot ioctl: view `<name>_spans`."""

    name: str
    syscalls: tuple[str, ...]  # "sync", "syncfs" → syscalls:sys_enter_sync / sys_exit_sync …
    where: str | None  # SQL over the sys_enter event's fields, e.g. "cmd IN (…)"
    required: bool
    why: str
    capture_filter: str | None = None


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
    events: tuple[EventRole, ...]
    spans: tuple[Span, ...]
    metrics: tuple[Metric, ...]
    metric_sql: tuple[str, ...]
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

    def threshold_value(self, ref: float | str) -> float:
        return self.thresholds[ref].value if isinstance(ref, str) else float(ref)

    @property
    def fix_subject(self) -> str:
        return self.fix[0].subject if self.fix else ""
