"""One incident's report: the analysis, the charts of the incident and the replay,
assembled into one HTML page (see page.py for escaping and self-containment)."""

from __future__ import annotations

from typing import Callable

from advisor import __version__
from advisor.analyze import diagnose
from advisor.kernel import KernelRelease
from advisor.report.charts import Chart, incident_charts
from advisor.report.page import capture_section, chart_figure, findings_section, h, page, table
from advisor.report.replay_chart import by_problem, replay_chart
from advisor.report.series import Incident, incident
from advisor.rules import Rule
from advisor.views import Views, attach, held

#: The steps a report goes through, for a progress bar.
STEPS = ("replay", "analyze", "incident", "charts", "page")


def replay_doc(con, label: str, problems: list[str] | None, kernel: str | None,
               views: Views | None = None) -> tuple[dict | None, str | None]:
    """The replay's document, or None and why it could not run."""
    from advisor.analyze import replay as engine  # the models: loaded only when a replay runs

    doc = engine.replay_store(con, label, problems, None, kernel, views)
    if doc is None:
        return None, engine.nothing_to_replay(con)
    return doc, None


def build(con, label: str, rules: list[Rule], release: KernelRelease | None = None, kernel: str | None = None,
          replay: bool = True, problems: list[str] | None = None, step: Callable[[str], None] = lambda s: None) -> str:
    # One set of views for the replay, the rules and the charts; the replay and the
    # incident's charts read block_requests eight times between them.
    views = attach(con)
    with held(con, views, "block_requests"):
        step("replay")
        rdoc, why_not = replay_doc(con, label, problems, kernel, views) if replay else (None, "not asked for (--no-replay)")
        step("analyze")
        doc = diagnose(con, rules, release, label, rdoc, views)  # its findings quote this replay
        step("incident")
        inc = incident(con, views)
    step("charts")
    charts = incident_charts(inc)
    step("page")
    sections = [
        capture_section(label, doc, __version__),
        findings_section(doc),
        _incident_section(inc, charts),
        _processes_section(inc),
        _replay_section(rdoc, why_not),
    ]
    return page(f"Writeback Advisor report: {label}", sections)


def _incident_section(inc: Incident, charts: list[Chart]) -> str:
    out = ['<section id="incident"><h2>The incident</h2>',
           "<p>Charts of time share one axis: seconds since the capture's first event.</p>"]
    out += [chart_figure(c) for c in charts]
    if inc.missing:
        items = "".join(f"<li>{h(part)}: not in this capture (record {h(events)})</li>" for part, events in inc.missing.items())
        out.append(f'<ul class="missing">{items}</ul>')
    out.append("</section>")
    return "".join(out)


def _processes_section(inc: Incident) -> str:
    if not inc.processes:
        return ""
    rows = [(p["comm"], p["pid"], p["program"], p["dirtied"], p["stalls"], p["stalled_ms"], p["waits"]) for p in inc.processes]
    return ('<section id="processes"><h2>Tasks</h2><p>Tasks that dirtied pages, were throttled by balance_dirty_pages() '
            "or waited on page writeback; program from sched:sched_process_exec when recorded.</p>"
            + table(("task (comm)", "pid", "program", "pages dirtied", "stalls", "stalled ms", "waits on writeback"), rows, "processes")
            + "</section>")


def _replay_section(rdoc: dict | None, why_not: str | None) -> str:
    if rdoc is None:
        return f'<section id="replay"><h2>Replay</h2><p>Not replayed: {h(why_not)}.</p></section>'
    wl, dev = rdoc["workload"], rdoc["workload"]["device"]
    out = ['<section id="replay"><h2>Replay: what each kernel policy would have done</h2>',
           f"<p>{wl['dirtying_events']:,} dirtying events over {wl['inodes']:,} inodes in {wl['span_seconds']:.3f} s; "
           f"kernel {h(wl['kernel'] or 'unknown')}; device {dev['bandwidth_mb_s']:,.0f} MB/s, {h(dev['latency_ms'])} ms per request, "
           f"queue depth {h(dev['queue_depth'])} ({h(dev['source'])}).</p>"]
    if rdoc.get("warnings"):
        out.append('<ul class="warning">' + "".join(f"<li>{h(w)}</li>" for w in rdoc["warnings"]) + "</ul>")
    if wl["assumptions"]:
        out.append("<details><summary>assumptions</summary><ul>" + "".join(f"<li>{h(a)}</li>" for a in wl["assumptions"]) + "</ul></details>")
    chart = replay_chart(rdoc)
    if chart is not None:
        out.append(chart_figure(chart))
    for problem, rows in by_problem(rdoc).items():
        observed = rdoc["observed"].get(problem, {})
        names = list(dict.fromkeys(k for r in rows for k in r["metrics"]))
        columns = ["metric", "observed"] + [r["policy"] + (" (this kernel)" if r["own_kernel"] else "") + f" [{r['kernels']}]" for r in rows]
        errors = next((r.get("own_kernel_error") for r in rows if r.get("own_kernel_error")), None)
        columns += ["this kernel vs observed"] if errors is not None else []
        table_rows = [(n, observed.get(n), *[r["metrics"].get(n) for r in rows],
                       *([f"{errors[n]['error']:+.0%}" if n in errors else None] if errors is not None else [])) for n in names]
        out.append(f"<h3>{h(problem)}</h3>" + table(columns, table_rows, "replay"))
    for problem, reason in rdoc["not_applicable"].items():
        out.append(f'<p class="not-applicable">{h(problem)}: not replayed — {h(reason)}</p>')
    out.append("</section>")
    return "".join(out)
