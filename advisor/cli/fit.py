"""Tables that fit the width they are printed at without cutting a name.

Rich shrinks a table wider than the terminal by folding cells anywhere, "FLUSH_DELAYED_IT"
over "EMS_NR (1)", and ellipsing columns that may not wrap. Here, in this order:
1. one-line headers wider than their column's values are abbreviated ("wait-if-required*"
   over numbers becomes "wir*") and a legend line under the table names each one in full,
   with its unit (a terminal's header of several lines wraps at its spaces instead);
2. a cell may wrap only between words (a column is never narrower than its longest word,
   or than its longest value when it must not wrap);
3. if it is still too wide it is printed wider than the terminal, whole: a long line
   wraps in the terminal (or stays long in a file) rather than losing characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text


@dataclass
class Fitted:
    width: int  # what the table needs at the least; may exceed the width asked for
    legend: Text | None


def _plain(cell) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        try:
            return Text.from_markup(cell).plain
        except Exception:  # noqa: BLE001 -- text with brackets that is not markup
            return cell
    return str(cell)


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((len(w) for w in re.split(r"[\s]+", text) if w), default=0)


def abbreviation(name: str, taken: set[str]) -> str | None:
    """"wait-if-required*" → "wir*", "this kernel\\nvs observed" → "tkvo", "avg ms" → "am";
    longer initials or a longer stem when the short one is taken; None if nothing shorter."""
    mark = "*" if name.endswith("*") else ""
    words = [w for w in re.split(r"[\s_\-/()]+", name.rstrip("*")) if w]
    if not words:
        return None
    tries = []
    if len(words) > 1:
        tries.append("".join(w[0] for w in words))
        tries += ["".join(w[0] for w in words[:-1]) + words[-1][:n] for n in range(2, len(words[-1]) + 1)]
    tries += [words[0][:n] + "." for n in range(3, len(words[0]))]
    for t in tries:
        t += mark
        if len(t) < len(name.replace("\n", " ")) and t not in taken:
            return t
    return None


MIN_SAVING = 3  # "holds" over "yes" stays: a legend for two characters costs more than it saves


def fit(table: Table, width: int, units: dict[str, str] | None = None, short: dict[str, str] | None = None,
        abbreviate: bool = True) -> Fitted:
    """Abbreviate `table`'s headers and set its columns' widths for `width`. `short`: the
    abbreviation to use for a header (else one is made from its words); `abbreviate=False`:
    headers stay whole (a query's column names)."""
    units = {k.replace("\n", " "): v for k, v in (units or {}).items()}
    short = short or {}
    gap = table.padding[1] + table.padding[3] + (1 if table.box else 0)  # a boxed table divides columns
    cols = table.columns
    gaps = gap * max(len(cols) - 1, 0)
    headers = [_plain(c.header) for c in cols]
    cells = [[_plain(x) for x in c._cells] for c in cols]
    widest = [max((_longest_line(x) for x in cs), default=0) for cs in cells]
    need = [max(_longest_line(h), w) for h, w in zip(headers, widest)]
    if sum(need) + gaps <= width:
        return Fitted(sum(need) + gaps, None)
    legend: list[tuple[str, str]] = []
    taken = set(headers)
    for i in sorted(range(len(cols)), key=lambda i: widest[i] - _longest_line(headers[i])):
        if not abbreviate or sum(need) + gaps <= width or _longest_line(headers[i]) - widest[i] < MIN_SAVING:
            continue
        if "\n" in headers[i]:
            continue  # a terminal's header of several lines ("for-sync (this kernel)\n3.11 and later") wraps at its spaces
        abbr = short.get(headers[i]) or short.get(headers[i].replace("\n", " ")) or abbreviation(headers[i], taken)
        if abbr is None or abbr in taken:
            continue
        taken.add(abbr)
        legend.append((abbr, headers[i].replace("\n", " ")))
        cols[i].header = headers[i] = abbr
        need[i] = max(len(abbr), widest[i])
    # The least a column may shrink to: its whole values where they must not wrap, else its
    # longest word (a header's included: it may wrap at its spaces).
    least = [max(need[i] if c.no_wrap else 0, _longest_word(headers[i]), *(_longest_word(x) for x in cells[i]))
             for i, c in enumerate(cols)]
    widths = list(need)
    while sum(widths) + gaps > width:
        i = max(range(len(cols)), key=lambda i: widths[i] - least[i])
        if widths[i] <= least[i]:
            break  # every column at its least: printed wider than asked
        widths[i] -= 1
    for c, w in zip(cols, widths):
        c.width = w
    text = None
    if legend:
        text = Text("legend: " + "; ".join(f"{a} = {f}" + (f" ({units[f]})" if units.get(f) else "") for a, f in legend), style="dim")
    return Fitted(sum(widths) + gaps, text)
