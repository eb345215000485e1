"""The replay side by side, for people: one table per problem on stdout."""

from __future__ import annotations

from rich.text import Text

from advisor.cli.console import out, section, table, terminal
from advisor.display import display_value


def _judged_as(doc: dict) -> str:
    given = doc.get("kernel_given")
    return f"; replayed as kernel {given} (--kernel)" if given else ""


def render(doc: dict) -> None:
    wl = doc["workload"]
    dev = wl["device"]
    head = (f"{wl['source']}: {wl['dirtying_events']:,} dirtying events, {wl['inodes']:,} inodes, {wl['span_seconds']:.3f} s; "
            f"kernel {wl['kernel'] or 'unknown'}{_judged_as(doc)}\ndevice: {dev['bandwidth_mb_s']:,.0f} MB/s, {dev['latency_ms']} ms/request, "
            f"queue depth {dev['queue_depth']} — {dev['source']}")
    if wl["params"]:
        head += "\ndescription: " + ", ".join(f"{k}={v}" for k, v in wl["params"].items())
    if wl["assumptions"]:
        head += "\nassumptions:\n" + "\n".join(f"  • {a}" for a in wl["assumptions"])
    out.print(section(Text("replay workload", style="bold"), Text(head)))
    by_problem: dict[str, list[dict]] = {}
    for r in doc["results"]:
        by_problem.setdefault(r["problem"], []).append(r)
    for problem, rows in by_problem.items():
        observed = doc["observed"].get(problem, {})
        names = list(dict.fromkeys(k for r in rows for k in r["metrics"]))
        synthetic = bool(wl["params"])  # nothing was observed
        own_row = next((r for r in rows if r.get("own_kernel_error")), None)
        # A policy's column: its name, "(this kernel)" for the capture's own, the kernels
        # that run it. Piped, one header line (awk reads it): policy[*] with * = this kernel.
        policies = [f"{r['policy']}{' (this kernel)' if r['own_kernel'] else ''}\n{r['kernels']}" if terminal()
                    else f"{r['policy']}{'*' if r['own_kernel'] else ''}" for r in rows]
        cols = ["metric", *([] if synthetic else ["observed"]), *policies, *([] if own_row is None else ["this kernel vs observed" if not terminal() else "this kernel\nvs observed"])]
        t = table(*cols, title=problem, right=tuple(cols[1:]), names=("metric",),
                  short={"this kernel vs observed": "error"}, units={"this kernel vs observed": "%"})
        for name in names:
            first = [] if synthetic else [display_value(observed.get(name))]
            last = [] if own_row is None else [_error(own_row["own_kernel_error"].get(name))]
            t.add_row(name, *first, *[display_value(r["metrics"].get(name)) for r in rows], *last)
        out.print(t)
        if not terminal() and rows:
            out.print(Text("policies: " + "; ".join(f"{r['policy']}: {r['kernels']}" for r in rows) + ("; * this kernel" if any(r["own_kernel"] for r in rows) else "")), soft_wrap=True)
        out.print("")
    for problem, reason in doc["not_applicable"].items():
        out.print(Text(f"{problem}: not replayed — {reason}", style="dim"))


def _error(e: dict | None) -> str:
    """The own-kernel replay's error on one metric, red beyond the tolerance."""
    if e is None:
        return ""
    text = f"{e['error']:+.0%}"
    return f"[bold red]{text}[/]" if abs(e["error"]) > 0.25 else text
