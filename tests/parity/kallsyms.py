"""Kernel symbols as trace-cmd names them, read from `trace-cmd dump --kallsyms`
(independently of the store), for checking pointers printed under %ps / %pS.

libtraceevent (tep_parse_kallsyms, event-parse.c) registers every `ADDRESS TYPE
NAME[\t[MODULE]]` line but absolute symbols (type A/a) and `$` names; a pointer
is named after the symbol at the greatest address not above it when it lies below
the next address (past the last symbol only an exact hit counts), `%pS` adding
`+0x<offset>`. Several names at one address: a pointer inside the function gets
the first listed; one at the address itself whichever its binary search meets
first, so any of them is accepted there.
"""

from __future__ import annotations

import bisect
import subprocess
from pathlib import Path


class Symbols:
    def __init__(self, lines: list[str]):
        by_addr: dict[int, list[str]] = {}
        for line in lines:
            parts = line.split()
            if len(parts) < 3:
                continue
            try:
                addr = int(parts[0], 16)
            except ValueError:
                continue
            if parts[1] in ("A", "a") or parts[2].startswith("$"):
                continue
            by_addr.setdefault(addr, []).append(parts[2])
        self.addrs = sorted(by_addr)
        self.names = [by_addr[a] for a in self.addrs]

    @classmethod
    def of(cls, trace: Path) -> Symbols:
        out = subprocess.run(["trace-cmd", "dump", "--kallsyms", str(trace)], capture_output=True, text=True, errors="replace").stdout
        return cls([ln for ln in out.splitlines() if not ln.startswith("\t")])

    def accepts(self, address: int, printed: str, with_offset: bool) -> bool:
        """Whether trace-cmd may print `printed` for `address`; False too when no
        symbol covers it (trace-cmd then prints the address in hex)."""
        i = bisect.bisect_right(self.addrs, address) - 1
        if i < 0 or (i == len(self.addrs) - 1 and address != self.addrs[i]):
            return False
        start = self.addrs[i]
        names = self.names[i] if address == start else self.names[i][:1]
        suffix = f"+{address - start:#x}" if with_offset else ""
        return printed in {n + suffix for n in names}

    def __bool__(self) -> bool:
        return bool(self.addrs)
