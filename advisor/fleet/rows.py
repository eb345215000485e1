"""One capture's findings as table rows: host, capture, kernel, then per rule its verdict,
every metric of every rule (NULL where the rule does not have it or could not measure it),
and the replay's before/after where the finding quotes one.

This is the embedded pipeline a fleet task runs: ingest (or the cached store), views,
rules, replay, nothing else; it takes a path and returns plain rows, so any engine
(local processes, a Spark task) can run it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from advisor.errors import AdvisorError

# Columns before the metrics, in order.
FIXED = (
    # host and capture_id as `advisor ingest --format parquet` names its partitions, so the
    # findings join the event datasets: the uname's node name, the inputs' content hash.
    ("host", pa.string()),
    ("capture", pa.string()),       # the path as given
    ("capture_id", pa.string()),    # the blake3 of the capture's bytes (first 16 hex digits)
    ("kernel", pa.string()),
    ("clock", pa.string()),
    ("span_seconds", pa.float64()),
    ("events", pa.int64()),
    ("lost_events", pa.int64()),
    ("rule", pa.string()),
    ("verdict", pa.string()),
    ("severity", pa.int64()),
    ("kernel_status", pa.string()),
    ("message", pa.string()),
    ("error", pa.string()),         # why this capture could not be analyzed (then verdict 'error')
)
REPLAY = (
    ("replay_metric", pa.string()),
    ("replay_before_policy", pa.string()),
    ("replay_before", pa.float64()),
    ("replay_after_policy", pa.string()),
    ("replay_after", pa.float64()),
)


def metric_names(rules) -> list[str]:
    names: dict[str, None] = {}
    for r in rules:
        for m in r.metrics:
            names.setdefault(m.name)
    return list(names)


def schema(rules) -> pa.Schema:
    fixed = [name for name, _ in FIXED] + [name for name, _ in REPLAY]
    clash = [m for m in metric_names(rules) if m in fixed]
    if clash:
        raise AdvisorError(f"rule metrics {clash} clash with the findings table's own columns")
    return pa.schema([*FIXED, *((m, pa.float64()) for m in metric_names(rules)), *REPLAY])


def capture_rows(path: str, rules_dir: str | None = None, read: str | None = None) -> list[dict]:
    """Every rule's finding on one capture, as rows of `schema`. A capture that cannot be
    read gives one row per rule with verdict 'error' and the reason. `read`: where to read
    it when not at `path` (the rows name `path`)."""
    from advisor.analyze import diagnose
    from advisor.rules import SEVERITY, load_rules
    from advisor.store import open_store, store_for
    from advisor.store.cache import given_store, is_store
    from advisor.store.parquet import host_of

    rules = load_rules(Path(rules_dir) if rules_dir else None)
    names = metric_names(rules)
    p = Path(read or path)
    try:
        store = given_store(p) if is_store(p) else store_for([p]).store
        with open_store(store) as con:
            info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
            host = host_of(con)
            doc = diagnose(con, rules, None, path)
    except AdvisorError as e:
        return [_error_row(path, r.id, str(e), names) for r in rules]
    c = doc["capture"]
    common = {"host": host, "capture": path,
              "capture_id": (info.get("inputs_blake3") or "")[:16] or None,
              "kernel": doc["kernel"]["release"], "clock": c["clock"], "span_seconds": c["span_seconds"],
              "events": c["events"] + c["blk_events"], "lost_events": c["lost_events"], "error": None}
    rows = []
    for f in doc["findings"]:
        row = dict(common, rule=f["rule"], verdict=f["verdict"], severity=SEVERITY[f["verdict"]],
                   kernel_status=f["kernel_status"]["status"], message=f["message"])
        row.update({m: _number(f["metrics"].get(m)) for m in names})
        r = f.get("replay") or {}
        row.update(replay_metric=r.get("metric"), replay_before_policy=r.get("before_policy"), replay_before=_number(r.get("before")),
                   replay_after_policy=r.get("after_policy"), replay_after=_number(r.get("after")))
        rows.append(row)
    return rows


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) else None


def _error_row(path: str, rule: str, error: str, names: list[str]) -> dict:
    row = {name: None for name, _ in (*FIXED, *REPLAY)}
    row.update({m: None for m in names})
    row.update(capture=path, rule=rule, verdict="error", severity=None, error=error)
    return row
