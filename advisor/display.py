"""How a metric value reads for people, the same in the replay's Rich tables and the
HTML report: "–" for unmeasured, yes/no, four significant digits, thousands separators."""

from __future__ import annotations


def display_value(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)
