"""The facts of two captures that limit a comparison: a different kernel, clock, device,
event set or lost events make a metric's change mean something other than the setting."""

from __future__ import annotations

import re

from advisor.analyze.document import capture_facts


def facts(con, views) -> dict:
    c = capture_facts(con)
    devices = []
    if views.met("block_requests"):
        devices = [r[0] for r in con.execute("SELECT DISTINCT dev FROM block_requests WHERE dev IS NOT NULL ORDER BY 1").fetchall()]
    filesystems = sorted(f"{fs} ({ev})" for fs, ev in con.execute("SELECT fs, evidence FROM capture_filesystems").fetchall())
    events = sorted(f"{s}:{e}" for s, e in con.execute("SELECT system, event FROM event_formats").fetchall())
    info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    if info.get("blktrace_inputs"):
        events.append("blktrace")
    return {
        "kernel": c["kernel_release"],
        "clock": c["clock"],
        "format": c["format"],
        "cpus": info.get("cpus"),
        "devices": devices,
        "filesystems": filesystems,
        "event_set": events,
        "lost_events": c["lost_events"],
        "damaged": c["damaged"],
        "span_seconds": c["span_seconds"],
        "events": c["events"] + c["blk_events"],
    }


# fact → why a difference limits the comparison
LIMITING = {
    "kernel": "a different kernel: its writeback policy differs too, not only the setting",
    "clock": "different trace clocks: durations are measured differently",
    "format": "different capture formats: some views come from other sources",
    "cpus": "a different number of CPUs",
    "devices": "different block devices",
    "filesystems": "different filesystems or backing devices",
    "event_set": "different events recorded: some metrics are measured on one side only, or from other sources",
    "lost_events": "lost events: operations are missing from one side",
    "damaged": "a damaged capture: it covers only what could be read",
}
CONTEXT = ("span_seconds", "events")


def differing(before: dict, after: dict) -> list[dict]:
    """Every fact, limiting differences first."""
    rows = []
    for key, why in LIMITING.items():
        b, a = before[key], after[key]
        same = _uncounted(b) == _uncounted(a) if key == "filesystems" else b == a
        differs = not same or (key == "lost_events" and (b or a))
        row = {"fact": key, "before": b, "after": a, "differs": bool(differs), "limits": why if differs else None}
        if key == "event_set" and differs:
            row["before"], row["after"] = sorted(set(b) - set(a)), sorted(set(a) - set(b))
            row["only"] = True
        rows.append(row)
    rows += [{"fact": key, "before": before[key], "after": after[key], "differs": False, "limits": None} for key in CONTEXT]
    return sorted(rows, key=lambda r: not r["differs"])


def _uncounted(filesystems):
    """A filesystem's evidence without its event count ("btrfs (695 btrfs events; bdi
    btrfs-1)" → "btrfs (btrfs events; bdi btrfs-1)"): the same filesystem on both sides
    shows different counts of its events."""
    if not isinstance(filesystems, list):
        return filesystems
    return [re.sub(r"\b[\d,]+ (\S+ events)", r"\1", f) for f in filesystems]


def merge(runs: list[dict]) -> dict:
    """One side's facts over its runs: a fact the runs share as is, else every run's value;
    lost events summed."""
    out = {}
    for key in runs[0]:
        values = [r[key] for r in runs]
        if key in ("lost_events", "events"):
            out[key] = sum(values)
        elif key == "span_seconds":
            out[key] = values if len(values) > 1 else values[0]
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = {"runs differ": values}
    return out
