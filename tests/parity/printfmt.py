"""Which printf conversion an event's print fmt applies to each field.

`trace-cmd report -R` prints every field as `name=value`, but a field that
the print fmt prints directly (`REC->ino` under `%lu`, `REC->flags` under
`0x%x`) is printed with that conversion; the others with libtraceevent's raw
rules. To compare values exactly we need to know which, e.g. that `1a` is
hex. This reads the print fmt the way libtraceevent pairs conversions with
arguments.

Which fields `-R` prints with their conversion is not simply "those the print fmt
prints directly": libtraceevent (print_selected_fields in event-parse.c, 1.7 and
1.8) walks the fields in their struct order with one cursor into the parsed print
fmt. Each field is searched for from the cursor on, wrapping round, and a match
moves the cursor past it; a field matched by the print fmt's last piece leaves the
cursor at the end, and every field after it in struct order is printed raw. E.g.
ext4_da_reserve_space, struct order dev ino i_blocks reserve_blocks
reserved_data_blocks mode, print fmt "... mode 0%o i_blocks %llu reserve_blocks
%dreserved_data_blocks %d": reserved_data_blocks matches the last piece, so mode
(0100644) comes out "mode=33188", where writeback_dirty_inode_enqueue's "mode 0%o"
gives "mode=100644". See `report_conversions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
    r"(?P<len>hh|h|ll|l|z|L|j|t)?(?P<conv>[diouxXcsSeEfgGp%])(?P<pext>[a-zA-Z0-9]*)"
)
_CAST = re.compile(r"^\(\s*(?:const\s+|unsigned\s+|signed\s+|struct\s+|enum\s+)*[A-Za-z_]\w*(?:\s+\w+)*\s*\**\s*\)\s*")
_FIELD = re.compile(r"^REC->(\w+)$")


@dataclass(frozen=True)
class Conversion:
    conv: str  # d i o u x X c s p ...
    pext: str  # %p extension letters (ps, pS, pU, ...)
    zero_x: bool  # the literal before ends with "0x"
    length: str = ""  # the length modifier: "" (int), h, hh, l, ll, z ...


def _split_format(text: str) -> tuple[str, str]:
    """Split `"fmt", args` into the unescaped format and the args text."""
    assert text.startswith('"'), text[:40]
    out = []
    i = 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if c == '"':
            return "".join(out), text[i + 1 :]
        out.append(c)
        i += 1
    return "".join(out), ""


def _split_args(text: str) -> list[str]:
    text = text.strip()
    if text.startswith(","):
        text = text[1:]
    args, depth, cur, quote = [], 0, [], None
    for c in text:
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
            continue
        if c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


def _strip(arg: str) -> str:
    arg = arg.strip()
    while True:
        m = _CAST.match(arg)
        if m and m.end() < len(arg):
            arg = arg[m.end() :].strip()
            continue
        if arg.startswith("(") and arg.endswith(")") and _balanced(arg[1:-1]):
            arg = arg[1:-1].strip()
            continue
        return arg


def _balanced(s: str) -> bool:
    depth = 0
    for c in s:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0


def _pieces(print_fmt: str) -> list[tuple[str | None, Conversion | None]]:
    """The print fmt as libtraceevent parses it: text pieces (None, None) and
    conversions (the field printed directly or None, the conversion)."""
    if not print_fmt.startswith('"'):
        return []
    fmt, rest = _split_format(print_fmt)
    args = _split_args(rest)
    pieces: list[tuple[str | None, Conversion | None]] = []
    ai = 0
    last = 0
    literal = ""
    for m in _SPEC.finditer(fmt):
        literal += fmt[last : m.start()]
        last = m.end()
        if m["conv"] == "%":
            literal += "%"  # "%%" is text
            continue
        if literal:
            pieces.append((None, None))
        ai += (m["width"] == "*") + (m["prec"] == "*")
        if ai >= len(args):
            return pieces
        f = _FIELD.match(_strip(args[ai]))
        ai += 1
        pext = m["pext"] if m["conv"] == "p" else ""
        pieces.append((f[1] if f else None, Conversion(m["conv"], pext, literal.endswith("0x"), m["len"] or "")))
        literal = ""
    if literal or last < len(fmt):
        pieces.append((None, None))
    return pieces


def field_conversions(print_fmt: str) -> dict[str, Conversion]:
    """field name → the conversion that prints it, for fields printed directly."""
    result: dict[str, Conversion] = {}
    for name, conv in _pieces(print_fmt):
        if name and name not in result:
            result[name] = conv
    return result


def report_conversions(print_fmt: str, fields: list[str]) -> dict[str, Conversion]:
    """field name → the conversion `trace-cmd report -R` prints it with; the fields
    left out are printed raw. `fields` are the event's own fields in struct order."""
    pieces = _pieces(print_fmt)
    result: dict[str, Conversion] = {}
    cursor: int | None = 0 if pieces else None
    for name in fields:
        if cursor is None:
            continue  # the cursor ran off the end: raw from here on
        for step in range(len(pieces)):
            i = (cursor + step) % len(pieces)
            if pieces[i][0] == name:
                result[name] = pieces[i][1]
                cursor = i + 1 if i + 1 < len(pieces) else None
                break
    return result
