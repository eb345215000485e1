"""The analysis document: kernel, capture quality, findings (the --json shape)."""

from __future__ import annotations

from advisor.analyze.replay_quote import quote_replays
from advisor.display import lost_any, lost_detail
from advisor.errors import TraceFormatError
from advisor.kernel import KernelRelease, parse_release
from advisor.rules import SEVERITY, Rule, analyze
from advisor.store import blk_views
from advisor.store_settings import UNKNOWN_TYPE_PREFIX
from advisor.views import Views
from advisor.views.coverage import cpu_coverage, lost_facts, silent_cpus


def capture_facts(con) -> dict:
    """What the capture is and how trustworthy: span, events, lost events."""
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    events = con.execute("SELECT coalesce(sum(events), 0) FROM event_formats").fetchone()[0]
    blk = _blk_events(con)
    lost_by = con.execute(
        "SELECT name, cpu, count, description FROM parse_stats WHERE severity = 'data_loss' AND count > 0 ORDER BY name, cpu"
    ).fetchall()
    # Read whole, but skewing counts: an event type recorded in two trace buffers.
    warnings = con.execute(
        "SELECT name, count, description FROM parse_stats WHERE severity = 'warning' AND count > 0 ORDER BY name"
    ).fetchall()
    first, last = info.get("first_ts"), info.get("last_ts")
    coverage = cpu_coverage(con)
    silent = silent_cpus(con)
    # "clock ticks" for -C x86-tsc (TSC cycles) or -C counter: no seconds in them.
    unit = info.get("ts_unit", "ns")
    return {
        "sources": [s for s in info.get("source_file", "").split("\n") if s],
        "format": info.get("format"),
        "clock": info.get("clock"),
        "events": int(events),
        "blk_events": int(blk),
        "first_ts": int(first) if first else None,
        "last_ts": int(last) if last else None,
        "ts_unit": unit,
        "span_seconds": (int(last) - int(first)) / 1e9 if first and last and unit == "ns" else None,
        "span_ticks": int(last) - int(first) if first and last and unit != "ns" else None,
        # lost_events, lost_gaps_uncounted, kernel_overwritten (advisor.views.coverage.lost_facts)
        **lost_facts(con),
        # CPUs whose overwritten buffer begins after the capture does (advisor.views.coverage).
        "cpu_coverage": coverage.as_dict() if coverage else None,
        # CPUs without a single event: idle, offline, or left out of the capture.
        "silent_cpus": silent.as_dict() if silent else None,
        # Recorded, but of a type id the file has no format for: kept raw, read by no view.
        "unknown_type_events": sum(int(k) for n, _, k, _ in lost_by if n.startswith(UNKNOWN_TYPE_PREFIX)),
        "data_loss": [{"name": n, "cpu": c, "count": int(k), "description": d} for n, c, k, d in lost_by],
        "warnings": [{"name": n, "count": int(k), "description": d} for n, k, d in warnings],
        "damaged": info.get("partial") == "true",
        # Where each input stopped being readable (file, offset or line, why).
        "damage": [d for d in info.get("damage", "").split("\n") if d],
        "kernel_release": info.get("kernel_release") or None,
    }


def _blk_events(con) -> int:
    return con.execute("SELECT count(*) FROM raw.blk_events").fetchone()[0] if blk_views.has_blk(con) else 0


def kernel_of(capture: dict, override: KernelRelease | None) -> tuple[KernelRelease | None, str]:
    if override is not None:
        return override, "--kernel"
    text = capture.get("kernel_release")
    if not text:
        return None, "unknown (the capture does not record it: pass --kernel)"
    return parse_release(text), "capture (uname)"


def diagnose(con, rules: list[Rule], kernel: KernelRelease | None, label: str, replayed: dict | None = None,
             views: Views | None = None) -> dict:
    """The analysis document; `replayed`: a replay document already made (see quote_replays);
    `views`: the connection's attached views, when the caller has them."""
    capture = capture_facts(con)
    if capture["events"] == 0 and capture["blk_events"] == 0:
        raise TraceFormatError(f"{label}: the capture has no events to analyze")
    release, origin = kernel_of(capture, kernel)
    findings = analyze(con, rules, release, views)
    blk_only = capture["events"] == 0
    doc = {
        "kernel": {"release": str(release) if release else None, "from": origin,
                   "vendor": release.vendor if release else None,
                   "may_carry_backports": release.may_carry_backports if release else None},
        "capture": capture,
        "findings": [],
    }
    for f in findings:
        d = f.as_dict()
        if blk_only and f.rule.blktrace:
            d["message"] += f" {f.rule.blktrace}"
        if lost_any(capture) and d["verdict"] != "not-applicable":
            d["message"] += (f" The capture lost {capture['lost_events']:,} events (the kernel's buffers overflowed{lost_detail(capture)}): these "
                             "metrics count only what was recorded, so counts are low and a percentile covers part of the run.")
        doc["findings"].append(d)
    quote_replays(con, label, doc, rules, replayed)
    return doc


def worst(doc: dict) -> int:
    return max((SEVERITY[f["verdict"]] for f in doc["findings"]), default=0)
