"""The fleet summary for people: verdicts by kernel, worst hosts per rule, errors."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from advisor.cli.analyze_view import STYLE
from advisor.cli.console import out


def render(doc: dict) -> None:
    kernels = Table(title="verdicts by kernel (captures)", title_justify="left", show_edge=False, header_style="bold")
    for name in ("kernel", "verdict", "captures"):
        kernels.add_column(name)
    for r in doc["verdicts_by_kernel"]:
        kernels.add_row(r["kernel"] or "unknown", Text(r["verdict"], style=STYLE.get(r["verdict"], "")), str(r["captures"]))
    out.print(kernels)
    hosts = Table(title="worst hosts per rule", title_justify="left", show_edge=False, header_style="bold")
    for name in ("rule", "host", "verdict", "captures flagged", "worst capture"):
        hosts.add_column(name, overflow="fold")
    for r in doc["worst_hosts"]:
        hosts.add_row(r["rule"], r["host"] or "unknown", Text(r["verdict"], style=STYLE.get(r["verdict"], "")),
                      f"{r['captures_flagged']} of {r['captures']}", r["worst_capture"])
    if not doc["worst_hosts"]:
        out.print(Text("no rule flagged any host", style="green"))
    else:
        out.print(hosts)
    for r in doc["errors"]:
        out.print(Text(f"not analyzed: {r['capture']}: {r['error']}", style="red"))
    out.print(Text(f"findings table: {doc['table']}/*.parquet", style="dim"))
