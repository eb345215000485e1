"""The replay's side-by-side policy comparison as a chart: per problem, its duration
metrics (what a user waits on: *_seconds, *_ms) for what the capture shows and for each
policy the workload was replayed under."""

from __future__ import annotations

from advisor.report import svg
from advisor.report.charts import Chart

# Metrics shown per problem, the first duration metrics in the model's own order.
METRICS_PER_PROBLEM = 3


def by_problem(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in doc["results"]:
        out.setdefault(r["problem"], []).append(r)
    return out


def duration_metrics(rows: list[dict]) -> list[str]:
    names = dict.fromkeys(k for r in rows for k, v in r["metrics"].items() if isinstance(v, (int, float)) and not isinstance(v, bool))
    return [n for n in names if n.endswith(("_seconds", "_ms"))][:METRICS_PER_PROBLEM]


def replay_chart(doc: dict) -> Chart | None:
    problems = {p: rows for p, rows in by_problem(doc).items() if duration_metrics(rows)}
    if not problems:
        return None
    with svg.style():
        fig = svg.figure(0.6 + 2.0 * len(problems))
        fig.subplots_adjust(left=0.16, right=0.98, top=0.93, bottom=0.06, hspace=0.9, wspace=0.9)
        grid = fig.add_gridspec(len(problems), METRICS_PER_PROBLEM)
        for row, (problem, rows) in enumerate(problems.items()):
            observed = doc["observed"].get(problem, {})
            for col, metric in enumerate(duration_metrics(rows)):
                ax = fig.add_subplot(grid[row, col])
                labels, values, colors = [], [], []
                if isinstance(observed.get(metric), (int, float)):
                    labels.append("observed")
                    values.append(observed[metric])
                    colors.append("gray")
                for r in rows:
                    value = r["metrics"].get(metric)
                    if isinstance(value, (int, float)):
                        labels.append(r["policy"] + (" (this kernel)" if r["own_kernel"] else ""))
                        values.append(value)
                        colors.append("tab:green" if r["fixed"] else "tab:red")
                ax.barh(range(len(values)), values, color=colors)
                ax.set_yticks(range(len(values)), labels, fontsize=7)
                ax.invert_yaxis()
                ax.set_title(metric if col else f"{problem}\n{metric}", loc="left", fontsize=8)
                ax.tick_params(axis="x", labelsize=7)
                ax.grid(True, axis="x", alpha=0.3)
        out = svg.to_svg(fig, "replay")
    note = "green: policy after the fix, red: before; gray: what the capture shows (where it shows it)"
    return Chart("replay", "Replay: policies side by side", out, note)
