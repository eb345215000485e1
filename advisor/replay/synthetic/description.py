"""`--workload NAME[:k=v,...]`: parsing a synthetic workload's description.

Each workload declares its parameters (`Param`: default, kind, help). Values take the
units people write in fio job files and sysctl settings:

- sizes: `4k`, `64M`, `16G` are binary (KiB, MiB, GiB, as fio reads them); `500MB`,
  `2GB` are decimal; a bare number is bytes;
- durations: `5s`, `30ms`, `20us`, `100ns`, `2m`; a bare number is seconds;
- rates (bytes per second): a size with an optional `/s`: `500MB/s`, `2G`;
- counts, ratios: plain numbers; choices: one of the listed words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.errors import UsageError

_BINARY = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_DECIMAL = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_IEC = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_TIME = {"": 1e9, "s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0, "m": 60e9, "min": 60e9}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def _split(text: str) -> tuple[float, str]:
    m = _NUMBER.match(text)
    if not m:
        raise ValueError
    return float(m.group(1)), m.group(2).lower()


def parse_size(text: str) -> int:
    value, unit = _split(text.removesuffix("/s"))
    for table in (_BINARY, _DECIMAL, _IEC):
        if unit in table:
            return int(value * table[unit])
    raise ValueError


def parse_duration_ns(text: str) -> int:
    value, unit = _split(text)
    if unit not in _TIME:
        raise ValueError
    return int(value * _TIME[unit])


def parse_count(text: str) -> int:
    value, unit = _split(text)
    if unit or value != int(value):
        raise ValueError
    return int(value)


def parse_number(text: str) -> float:
    value, unit = _split(text)
    if unit:
        raise ValueError
    return value


_KINDS = {
    "size": (parse_size, "a size (4k, 64M, 16G, 500MB)"),
    "rate": (parse_size, "bytes per second (500MB/s, 2G)"),
    "duration": (parse_duration_ns, "a duration (5s, 30ms, 20us)"),
    "count": (parse_count, "a whole number"),
    "number": (parse_number, "a number"),
}


@dataclass(frozen=True)
class Param:
    default: str  # as a user would write it; parsed like a user's value
    kind: str  # size, rate, duration, count, number, or "a|b|c" (choices)
    help: str
    zero_ok: bool = False  # 0 is meaningful (e.g. "the preset's"); otherwise it must be > 0

    def parse(self, name: str, text: str, workload: str):
        if "|" in self.kind:
            choices = self.kind.split("|")
            if text not in choices:
                raise UsageError(f"--workload {workload}: {name}={text!r} is not one of {', '.join(choices)}")
            return text
        parse, what = _KINDS[self.kind]
        try:
            value = parse(text)
        except ValueError:
            raise UsageError(f"--workload {workload}: {name}={text!r} is not {what}") from None
        if value < 0 or (value == 0 and not self.zero_ok):
            raise UsageError(f"--workload {workload}: {name}={text!r} must be {'0 or more' if self.zero_ok else 'more than 0'}")
        return value


def split_description(text: str) -> tuple[str, dict[str, str]]:
    """'NAME:k=v,k=v' → (NAME, {k: v}); a malformed pair is a usage error."""
    name, _, rest = text.strip().partition(":")
    if not name:
        raise UsageError(f"--workload: {text!r} names no workload (NAME[:key=value,...])")
    pairs: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--workload {name}: {item!r} is not key=value")
        if key.strip() in pairs:
            raise UsageError(f"--workload {name}: {key.strip()} given twice")
        pairs[key.strip()] = value.strip()
    return name, pairs


def resolve(workload: str, params: dict[str, Param], given: dict[str, str]) -> tuple[dict, dict[str, str]]:
    """Typed values for every parameter (given or default), and the text of each as used."""
    unknown = sorted(set(given) - set(params))
    if unknown:
        raise UsageError(f"--workload {workload}: unknown parameter {unknown[0]!r}; it takes {', '.join(params)}")
    text = {k: given.get(k, p.default) for k, p in params.items()}
    return {k: params[k].parse(k, v, workload) for k, v in text.items()}, text
