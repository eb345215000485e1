"""The names an event's print format gives a field's values, as trace-cmd prints them.

A tracepoint's format file ends with `print fmt:`, the C arguments of its TP_printk. Bit
flags and enums are printed through tables written in that C:

    __print_flags(REC->state, "|", {(1 << 0), "I_DIRTY_SYNC"}, {(1 << 2), "I_DIRTY_PAGES"}, ...)
    __print_symbolic(REC->reason, { 0, "background" }, { 1, "vmscan" }, { 2, "sync" }, ...)
    (REC->gfp_flags) ? __print_flags(REC->gfp_flags, "|", {( unsigned long)(( gfp_t)0x01u), "GFP_DMA"}, ...) : "none"

The kernel has already expanded its macros, so a value is an integer constant expression
(`(1ULL << 3)`, `( unsigned long)((( gfp_t)0x20u)|(( gfp_t)0x800u))`, `-6ULL`); one that
still names a constant the format does not define is skipped, never guessed.

Decoding follows libtraceevent (trace-cmd report) and the kernel's trace_print_flags_seq():
flags are taken in the table's order, each whose bits are all set is printed and its bits
cleared, what is left is printed in hex (state=I_SYNC|0x20000); 0 prints the table's 0
entry or nothing (state=). A symbol is the entry equal to the value, else the value in hex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

U64 = (1 << 64) - 1

_CALL = re.compile(r"__print_(flags|symbolic)(?:_u64)?\s*\(")
_FIELD = re.compile(r"REC->(\w+)")
# `(REC->gfp_flags) ? __print_flags(...) : "none"`: what a 0 value prints instead.
_TERNARY_BEFORE = re.compile(r"\(\s*REC->(\w+)\s*\)\s*\?\s*$")
_TERNARY_AFTER = re.compile(r'^\s*:\s*"((?:[^"\\]|\\.)*)"')
_STRING_IN = re.compile(r'"')
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_]\w*)|(<<|>>|[-+*/%|&^~!()]))")
# Words that make a parenthesised list of words a cast, `(unsigned long)-1`, not a constant.
_TYPE_WORDS = frozenset({"unsigned", "signed", "long", "int", "short", "char", "const", "u8", "u16", "u32", "u64", "s8", "s16",
                         "s32", "s64", "__u8", "__u16", "__u32", "__u64", "__s32", "__s64", "size_t", "gfp_t", "bool", "enum", "__force"})


@dataclass(frozen=True)
class ValueNames:
    """One __print_flags or __print_symbolic table of an event's print format."""

    kind: str  # "flags" or "symbolic"
    field: str
    entries: tuple[tuple[int, str], ...]
    delim: str = "|"
    zero: str | None = None  # what the format prints for 0 instead of the table (a ternary)
    skipped: tuple[str, ...] = field(default=())  # entries whose value is not a constant

    def name(self, value: int) -> str:
        """The text trace-cmd prints for this value."""
        value &= U64
        if self.kind == "symbolic":
            return next((n for v, n in self.entries if v == value), f"{value:#x}")
        if value == 0:
            return self.zero if self.zero is not None else next((n for v, n in self.entries if v == 0), "")
        names = []
        for v, n in self.entries:
            if v and value & v == v:
                names.append(n)
                value &= ~v
        if value:
            names.append(f"{value:#x}")
        return self.delim.join(names)


def value_names(print_fmt: str) -> list[ValueNames]:
    """Every flag and symbol table in a print format, with the field each one prints."""
    found = []
    text = print_fmt
    for m in _CALL.finditer(text):
        if _inside_string(text, m.start()):
            continue
        end = _closing(text, m.end() - 1)
        if end is None:
            continue  # cut short: nothing to read
        args = _split(text[m.end() : end])
        fields = _FIELD.findall(args[0]) if args else []
        if len(set(fields)) != 1:
            continue  # an expression over several fields: no one field to name
        kind = m.group(1)
        delim = "|"
        pairs = args[1:]
        if kind == "flags":
            if not pairs:
                continue
            delim = _string(pairs[0])
            pairs = pairs[1:]
            if delim is None:
                continue
        entries, skipped = [], []
        for p in pairs:
            entry = _entry(p)
            if entry is None:
                if _STRING_IN.search(p):  # `{ 0, ((void *)0) }` ends some tables: no entry
                    skipped.append(p.strip())
            else:
                entries.append(entry)
        zero = None
        before = _TERNARY_BEFORE.search(text[: m.start()])
        after = _TERNARY_AFTER.match(text[end + 1 :])
        if before and after and before.group(1) == fields[0]:
            zero = _unescape(after.group(1))
        found.append(ValueNames(kind, fields[0], tuple(entries), delim, zero, tuple(skipped)))
    return found


def _inside_string(text: str, pos: int) -> bool:
    quoted, i = False, 0
    while i < pos:
        if text[i] == "\\" and quoted:
            i += 2
            continue
        if text[i] == '"':
            quoted = not quoted
        i += 1
    return quoted


def _scan(text: str, start: int = 0):
    """(index, character, depth after it) of each character outside string
    literals, from `start`; parentheses and braces nest."""
    depth, i, quoted = 0, start, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        else:
            if c in "({":
                depth += 1
            elif c in ")}":
                depth -= 1
            yield i, c, depth
        i += 1


def _closing(text: str, open_at: int) -> int | None:
    """Where the parenthesis at open_at closes, skipping string literals."""
    for i, c, depth in _scan(text, open_at):
        if c in ")}" and depth == 0:
            return i
    return None


def _split(text: str) -> list[str]:
    """Arguments separated by commas outside parentheses, braces and strings."""
    parts, start = [], 0
    for i, c, depth in _scan(text):
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    tail = text[start:]
    if tail.strip():
        parts.append(tail)
    return parts


def _string(arg: str) -> str | None:
    m = re.fullmatch(r'\s*"((?:[^"\\]|\\.)*)"\s*', arg)
    return _unescape(m.group(1)) if m else None


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _entry(arg: str) -> tuple[int, str] | None:
    """`{ (1 << 2), "I_DIRTY_PAGES" }` → (4, "I_DIRTY_PAGES"); None when the value is not
    a constant (`{ BTRFS_X, "x" }`) or the entry is not a pair."""
    inner = arg.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return None
    parts = _split(inner[1:-1])
    if len(parts) != 2:
        return None
    name = _string(parts[1])
    value = constant(parts[0])
    if name is None or value is None:
        return None
    return value & U64, name


def constant(expr: str) -> int | None:
    """The value of a C integer constant expression, or None when it names anything
    (a constant the kernel did not expand, a field) or is not one."""
    tokens = _tokens(expr)
    if tokens is None or not tokens:
        return None
    parser = _Parser(tokens)
    try:
        value = parser.expression(0)
    except (ValueError, IndexError, ZeroDivisionError):
        return None
    return value & U64 if parser.at_end() else None


def _tokens(expr: str) -> list[tuple[str, object]] | None:
    out, pos, expr = [], 0, expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            return None
        number, word, op = m.groups()
        if number is not None:
            octal = len(number) > 1 and number[0] == "0" and number[1] not in "xX"  # C's 0644
            out.append(("num", int(number, 8) if octal else int(number, 0)))
        elif word is not None:
            out.append(("word", word))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


_BINARY = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


class _Parser:
    def __init__(self, tokens):
        self.tokens, self.i = tokens, 0

    def at_end(self) -> bool:
        return self.i == len(self.tokens)

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expression(self, min_prec: int) -> int:
        left = self.unary()
        while True:
            kind, op = self.peek()
            prec = _BINARY.get(op) if kind == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.expression(prec + 1)
            left = _apply(op, left, right)

    def unary(self) -> int:
        kind, op = self.peek()
        if kind == "op" and op in "~-+!":
            self.take()
            v = self.unary()
            return {"~": ~v, "-": -v, "+": v, "!": int(not v)}[op]
        if kind == "op" and op == "(":
            if self._cast():
                return self.unary()
            self.take()
            v = self.expression(0)
            if self.take() != ("op", ")"):
                raise ValueError("unbalanced")
            return v
        if kind == "num":
            self.take()
            return op
        raise ValueError(f"not a constant: {op}")  # a name: a constant the format did not expand

    def _cast(self) -> bool:
        """`( unsigned long)`, `(( gfp_t)0x20u)`'s `( gfp_t)`: skip a cast (the value is kept
        in 64 bits, as libtraceevent keeps it)."""
        j, words = self.i + 1, []
        while j < len(self.tokens) and (self.tokens[j][0] == "word" or self.tokens[j] == ("op", "*")):
            words.append(self.tokens[j][1])
            j += 1
        if not words or j >= len(self.tokens) or self.tokens[j] != ("op", ")"):
            return False
        nxt = self.tokens[j + 1] if j + 1 < len(self.tokens) else ("end", None)
        typed = any(w in _TYPE_WORDS or w.endswith("_t") for w in words)
        # `(FOO)` of a name the format left unexpanded is no cast: the entry is skipped.
        if not typed or not (nxt[0] in ("num", "word") or nxt[0] == "op" and nxt[1] in "(~!-+"):
            return False
        self.i = j + 1
        return True


def _apply(op: str, a: int, b: int) -> int:
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "&":
        return a & b
    if op == "<<":
        return (a << b) & U64
    if op == ">>":
        return (a & U64) >> b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return int(a / b)
    return a % b
