"""Which printf conversion an event's print fmt applies to each field.

`trace-cmd report -R` prints every field as `name=value`, but a field that
the print fmt prints directly (`REC->ino` under `%lu`, `REC->flags` under
`0x%x`) is printed with that conversion; the others with libtraceevent's raw
rules. To compare values exactly we need to know which, e.g. that `1a` is
hex. This reads the print fmt the way libtraceevent pairs conversions with
arguments.
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
    #: "%0x" (a 0 flag, no width): trace-cmd report -R (libtraceevent 1.7) does not
    #: take it for hex and prints the field in decimal, e.g. timer_migration's
    #: "migrator=%0x" with the u8 0xff comes out "migrator=255".
    raw_decimal: bool = False


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


def field_conversions(print_fmt: str) -> dict[str, Conversion]:
    """field name → the conversion that prints it, for fields printed directly."""
    if not print_fmt.startswith('"'):
        return {}
    fmt, rest = _split_format(print_fmt)
    args = _split_args(rest)
    result: dict[str, Conversion] = {}
    ai = 0
    last = 0
    for m in _SPEC.finditer(fmt):
        literal = fmt[last : m.start()]
        last = m.end()
        if m["conv"] == "%":
            continue
        ai += (m["width"] == "*") + (m["prec"] == "*")
        if ai >= len(args):
            break
        arg = _strip(args[ai])
        ai += 1
        f = _FIELD.match(arg)
        if f and f[1] not in result:
            pext = m["pext"] if m["conv"] == "p" else ""
            result[f[1]] = Conversion(m["conv"], pext, literal.endswith("0x"), "0" in m["flags"] and not m["width"])
    return result
