"""How a metric value reads for people, the same in the replay's Rich tables and the
HTML report: "–" for unmeasured, yes/no, four significant digits, thousands separators in
quantities but never in identifiers (pids, inodes, timestamps: `display_id`), no exponents."""

from __future__ import annotations


def display_value(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v.is_integer() or abs(v) >= 1e4:
            return f"{v:,.0f}"  # 268,600 rather than 2.686e+05
        return f"{v:.4g}" if abs(v) >= 1e-4 else f"{v:.2e}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def display_id(v) -> str:
    """An evidence cell: integers as the trace prints them (pid 3556, ts 1174483689309,
    not 3,556 and 1,174,483,689,309), floats with three decimals (milliseconds)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)
