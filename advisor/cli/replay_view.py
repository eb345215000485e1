"""The replay side by side, for people: one Rich table per problem on stderr."""

from __future__ import annotations

from rich.panel import Panel
from rich.table import Table

from advisor.cli.console import err
from advisor.display import display_value


def render(doc: dict) -> None:
    wl = doc["workload"]
    dev = wl["device"]
    head = (f"{wl['source']}: {wl['dirtying_events']:,} dirtying events, {wl['inodes']:,} inodes, {wl['span_seconds']:.3f} s; "
            f"kernel {wl['kernel'] or 'unknown'}\ndevice: {dev['bandwidth_mb_s']:,.0f} MB/s, {dev['latency_ms']} ms/request, "
            f"queue depth {dev['queue_depth']} — {dev['source']}")
    if wl["params"]:
        head += "\ndescription: " + ", ".join(f"{k}={v}" for k, v in wl["params"].items())
    if wl["assumptions"]:
        head += "\nassumptions:\n" + "\n".join(f"  • {a}" for a in wl["assumptions"])
    err.print(Panel(head, title="replay workload", expand=False), markup=False)
    by_problem: dict[str, list[dict]] = {}
    for r in doc["results"]:
        by_problem.setdefault(r["problem"], []).append(r)
    for problem, rows in by_problem.items():
        observed = doc["observed"].get(problem, {})
        names = list(dict.fromkeys(k for r in rows for k in r["metrics"]))
        t = Table(title=problem, title_justify="left")
        t.add_column("metric")
        synthetic = bool(wl["params"])  # nothing was observed
        if not synthetic:
            t.add_column("observed", justify="right")
        for r in rows:
            own = " (this kernel)" if r["own_kernel"] else ""
            t.add_column(f"{r['policy']}{own}\n[dim]{r['kernels']}[/]", justify="right")
        own_row = next((r for r in rows if r.get("own_kernel_error")), None)
        if own_row is not None:
            t.add_column("this kernel\nvs observed", justify="right")
        for name in names:
            first = [] if synthetic else [display_value(observed.get(name))]
            last = [] if own_row is None else [_error(own_row["own_kernel_error"].get(name))]
            t.add_row(name, *first, *[display_value(r["metrics"].get(name)) for r in rows], *last)
        err.print(t)
    for problem, reason in doc["not_applicable"].items():
        err.print(f"[dim]{problem}: not replayed — {reason}[/]")


def _error(e: dict | None) -> str:
    """The own-kernel replay's error on one metric, red beyond the tolerance."""
    if e is None:
        return ""
    text = f"{e['error']:+.0%}"
    return f"[bold red]{text}[/]" if abs(e["error"]) > 0.25 else text
