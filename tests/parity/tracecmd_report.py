"""Run `trace-cmd report -R -t` and compare its events with a store's.

Every event must match in order: timestamp (ns), CPU, pid, task name, event
name and every field value (numbers compared as the same bits in the field's
width, in the base the print fmt uses; strings and byte arrays exactly).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tests.parity.kallsyms import Symbols
from tests.parity.printfmt import Conversion, report_conversions

# The timestamp is seconds.nanoseconds, or a bare count for a clock that is not in
# nanoseconds: "[001]32915178516790:" (-C x86-tsc), "[000]           2:" (-C counter).
LINE = re.compile(r"^(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s*(?P<ts>\d+\.\d{9}|\d+):\s+(?P<event>\w+):\s*(?P<rest>.*)$")
LOST = re.compile(r"^(?:\S+: )?CPU:(?P<cpu>\d+) \[(?:(?P<n>\d+) )?EVENTS DROPPED\]$")


def _line_re(instances: list[str]) -> re.Pattern:
    """LINE, after the `NAME: ` trace-cmd puts before an event of a trace instance
    other than the top one (`trace-cmd record -B NAME`): "wa:   dd-3170 [000] ..."."""
    if not instances:
        return LINE
    names = "|".join(re.escape(n) for n in instances)
    return re.compile(rf"^(?:(?P<instance>{names}): )?" + LINE.pattern[1:])


def trace_cmd() -> str | None:
    return shutil.which("trace-cmd")


def report_lines(path: Path, raw: bool = True):
    """`trace-cmd report -R -t` (raw fields, ns), or with raw=False the default report."""
    proc = subprocess.Popen(
        [trace_cmd(), "report", *(["-R", "-t"] if raw else []), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        errors="surrogateescape",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        yield line.rstrip("\n")
    assert proc.wait() == 0, f"trace-cmd report failed on {path}"


@dataclass
class Field:
    name: str
    type: str
    size: int
    signed: bool
    conv: Conversion | None

    def __post_init__(self) -> None:
        # A scalar printed in decimal: "%d", "%u", "%i" or no conversion of its own.
        self.decimal = not self.is_array and (self.conv is None or self.conv.conv in ("d", "i", "u"))

    @property
    def is_array(self) -> bool:
        return "[" in self.type

    @property
    def is_dynamic(self) -> bool:
        return self.type.startswith("__data_loc") or self.type.startswith("__rel_loc")

    @property
    def is_stringish(self) -> bool:
        # libtraceevent's TEP_FIELD_IS_STRING: arrays of char, u8 or s8.
        return self.is_array and any(t in self.type for t in ("char", "u8", "s8"))

    @property
    def is_long(self) -> bool:
        return "long" in self.type

    @property
    def is_pointer(self) -> bool:
        return "*" in self.type


@dataclass
class Result:
    events: int = 0
    lines: int = 0
    values: int = 0
    unchecked: Counter = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)
    report_counts: Counter = field(default_factory=Counter)
    lost_lines: list[tuple[int, int | None, int]] = field(default_factory=list)
    #: the store's printk_strings: address → the texts listed there
    printk: dict[int, set[str]] = field(default_factory=dict)
    #: the file's kallsyms, as trace-cmd dumps it
    symbols: Symbols | None = None

    def bad(self, msg: str) -> None:
        if len(self.mismatches) < 50:
            self.mismatches.append(msg)
        else:
            self.mismatches.append("…")


def _to_bytes(value, f: Field, printed_len: int) -> bytes | None:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, list):
        if not value:
            return b""
        # Element width: static arrays from the field size, dynamic ones from the print.
        size = f.size // len(value) if not f.is_dynamic and f.size else max(1, printed_len // len(value))
        if size == 1 and min(value) >= 0 and max(value) < 256:
            return bytes(value)
        return b"".join(int(v).to_bytes(size, "little", signed=int(v) < 0) for v in value)
    return None


def _parse_array(text: str) -> bytes | None:
    if not (text.startswith("ARRAY[") and text.endswith("]")):
        return None
    inner = text[6:-1].strip()
    try:
        got = bytes.fromhex(inner.replace(",", ""))  # "ARRAY[9f, 07, 21]": two digits a byte
        if 4 * len(got) - 2 == len(inner):
            return got
    except ValueError:
        pass
    return bytes(int(x, 16) for x in inner.split(", ")) if inner else b""


def _expected_int(token: str, f: Field) -> int | None:
    """The integer trace-cmd printed, read in the base its conversion implies."""
    t = token.strip()
    conv = f.conv
    try:
        if t == "(nil)":
            return 0
        if conv and conv.conv in "xX":
            return int(t[2:] if t.lower().startswith("0x") else t, 16)
        if conv and conv.conv == "o":
            return int(t, 8)
        if conv and conv.conv == "c":
            return ord(t) if len(t) == 1 else None
        if t.lower().startswith("0x") or t.lower().startswith("-0x"):
            return int(t, 16)
        return int(t, 10)
    except ValueError:
        return None


def _read_past_the_array(ours: str, printed: str) -> bool:
    """libtraceevent prints a char array with "%s" (print_field_raw), so an array
    the kernel filled without a NUL is printed on into the record's padding up to
    the next zero byte: xfs_lookup's `name`, a 1-byte __dynamic_array holding "f",
    comes out "f\x10". The field is what we keep; the record is padded to 4 bytes,
    so at most 3 bytes follow it."""
    return bool(ours) and printed.startswith(ours) and len(printed) - len(ours) <= 3


def check_value(f: Field, ours, printed: str, res: Result, where: str) -> None:
    res.values += 1
    if f.decimal and type(ours) is int and printed == str(ours):
        return  # the same number in the same base: what the checks below accept too, found sooner
    arr = _parse_array(printed)
    if f.is_array or arr is not None:
        if arr is not None:
            mine = _to_bytes(ours, f, len(arr))
            if mine is None:
                res.bad(f"{where} {f.name}: ours {ours!r}, trace-cmd {printed!r}")
            elif isinstance(ours, str) and not f.is_dynamic:
                # A static char[] we keep up to its NUL: the printed array holds all bytes.
                if arr[: len(mine)] != mine or (len(arr) > len(mine) and arr[len(mine)] != 0):
                    res.bad(f"{where} {f.name}: ours {ours!r}, trace-cmd {printed!r}")
            elif mine != arr and mine != arr.split(b"\0", 1)[0]:
                res.bad(f"{where} {f.name}: ours {ours!r}, trace-cmd {printed!r}")
            return
        # Printed as a string (printable, up to the first NUL).
        if isinstance(ours, list):
            ours = bytes(ours).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        if ours != printed and not _read_past_the_array(ours, printed):
            res.bad(f"{where} {f.name}: ours {ours!r}, trace-cmd {printed!r}")
        return
    if isinstance(ours, bool):
        ours = int(ours)
    if not isinstance(ours, int):
        res.bad(f"{where} {f.name}: ours {ours!r} is not a number, trace-cmd {printed!r}")
        return
    if f.conv and f.conv.conv == "p" and f.conv.pext and not printed.strip().lower().startswith("0x"):
        # %ps/%pS (and %pf/%pF of old kernels) print a kernel symbol from the file's kallsyms.
        if f.conv.pext[0] in "sSfF" and res.symbols:
            if not res.symbols.accepts(ours & ((1 << 64) - 1), printed, with_offset=f.conv.pext[0] in "SF"):
                res.bad(f"{where} {f.name}: ours {ours:#x}, trace-cmd {printed!r}")
            return
        res.unchecked[f"symbol ({f.name})"] += 1
        return
    if f.conv and f.conv.conv == "s":
        # A pointer under %s: trace-cmd prints the kernel string at that address from
        # the file's printk formats, or the address in hex when it has none there (or
        # when libtraceevent could not parse the print fmt: maple_tree's ma_read
        # prints fn=0xffffffff82522880 although "mt_find" is listed at that address).
        if printed in res.printk.get(ours & ((1 << 64) - 1), ()):
            return
        t = printed.strip().lower()
        try:
            expected = int(t[2:] if t.startswith("0x") else t, 16)
        except ValueError:
            res.bad(f"{where} {f.name}: ours {ours:#x} ({res.printk.get(ours)}), trace-cmd {printed!r}")
            return
        if (ours & ((1 << 64) - 1)) != expected:
            res.bad(f"{where} {f.name}: ours {ours:#x}, trace-cmd {printed!r}")
        return
    expected = _expected_int(printed, f)
    if expected is None:
        res.bad(f"{where} {f.name}: cannot read trace-cmd's {printed!r} (conversion {f.conv})")
        return
    mask = (1 << (8 * f.size)) - 1 if f.size in (1, 2, 4, 8) else (1 << 64) - 1
    if f.conv and f.conv.conv in "diouxXc" and f.conv.length in ("", "h", "hh"):
        # libtraceevent evaluates the print fmt's argument (casts included) and
        # prints it as the conversion says: an 8-byte field under "%d" comes out as
        # its low 32 bits (xfs_log_reserve's tail_lsn 0x100000002 under
        # "tail_block %d", ((uint)(REC->tail_lsn)), prints 2).
        mask &= {"": 0xFFFFFFFF, "h": 0xFFFF, "hh": 0xFF}[f.conv.length]
    if (ours & mask) != (expected & mask):
        res.bad(f"{where} {f.name}: ours {ours}, trace-cmd {printed!r}")


def split_fields(rest: str, names: list[str]) -> list[str] | None:
    """Split `a=1 b=x y c=3` by the known field names, in order."""
    starts = []
    pos = 0
    for i, name in enumerate(names):
        tag = name + "="
        if i == 0:
            if not rest.startswith(tag):
                return None
            at = 0
        else:
            at = rest.find(" " + tag, pos)
            if at < 0:
                return None
            at += 1
        starts.append((at, at + len(tag)))
        pos = at + len(tag)
    return [
        rest[vstart : (starts[i + 1][0] - 1 if i + 1 < len(starts) else len(rest))]
        for i, (_, vstart) in enumerate(starts)
    ]


def check_stack_prefix(f: Field, ours: list, printed: str, res: Result, where: str) -> None:
    """ftrace:kernel_stack declares `unsigned long caller[8]` but holds `size` callers,
    which we keep (see stack_lines for the whole list). `report -R` prints the declared
    8: the first of ours, then (for a shorter stack) the bytes after the record, such as
    the next event's header."""
    res.values += 1
    arr = _parse_array(printed)
    width = f.size // 8
    mine = b"".join(int(v).to_bytes(width, "little") for v in (ours or [])[:8])
    if arr is None or not ours or arr[: len(mine)] != mine:
        res.bad(f"{where} caller: ours {ours!r}, trace-cmd {printed[:160]!r}")


def stack_lines(trace: Path) -> list[list[int]]:
    """Each kernel_stack's callers as `trace-cmd report` prints them ("=> ffffffff81b34462",
    or "=> symbol (ffffffff81b34462)" when the file has kallsyms), in report order."""
    stacks: list[list[int]] = []
    for line in report_lines(trace, raw=False):
        if re.search(r"\bkernel_stack:\s+<stack trace\s*>", line):
            stacks.append([])
        elif line.startswith("=> ") and stacks:
            addr = line.rsplit("(", 1)[-1].rstrip(")") if line.endswith(")") else line[3:]
            stacks[-1].append(int(addr.strip(), 16))
    return stacks


def compare(store: Path, trace: Path) -> Result:
    res = Result()
    con = duckdb.connect(str(store), read_only=True)
    formats = {}
    for table, event, fields, fmt, n in con.execute(
        "SELECT table_name, event, fields, print_fmt, events FROM event_formats"
    ).fetchall():
        own = [f for f in fields if not f["name"].startswith("common_")]
        convs = report_conversions(fmt, [f["name"] for f in own])
        fl = [Field(f["name"], f["type"], f["size"], f["signed"], convs.get(f["name"])) for f in own]
        formats[event] = (table, fl, n)
    rows: dict[str, deque] = {}
    for event, (table, fl, n) in formats.items():
        if n:
            # Common columns may have given way to fields of the same name.
            names = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
            common = names[:8]
            sel = [common[0], common[1], common[2], common[3], common[5]] + [f.name for f in fl]
            q = f'SELECT {", ".join(chr(34) + c + chr(34) for c in sel)} FROM "{table}" ORDER BY 1'
            rows[event] = deque(con.execute(q).fetchall())
    lost = {r[0]: r for r in con.execute("SELECT next_event_id, cpu, count FROM lost_events").fetchall()} if _has(con, "lost_events") else {}
    for address, text in con.execute("SELECT address, text FROM printk_strings").fetchall():
        res.printk.setdefault(address, set()).add(text)
    res.symbols = Symbols.of(trace)
    listed = con.execute("SELECT value FROM trace_info WHERE key = 'instances'").fetchall()
    line_re = _line_re(listed[0][0].split(",") if listed else [])
    instance_of = dict(con.execute("SELECT id, instance FROM instance_events").fetchall())
    con.close()
    pending_lost = []
    for line in report_lines(trace):
        if line.startswith("cpus=") or line.startswith("version =") or not line.strip():
            continue
        m = LOST.match(line)
        if m:
            pending_lost.append((int(m["cpu"]), int(m["n"]) if m["n"] else None))
            continue
        res.lines += 1
        m = line_re.match(line)
        if not m:
            res.bad(f"unparsed report line: {line[:160]!r}")
            continue
        event = m["event"]
        res.report_counts[event] += 1
        if event not in rows or not rows[event]:
            res.bad(f"report has {event} at {m['ts']} that we do not")
            continue
        ours = rows[event].popleft()
        eid, ts, cpu, pid, comm = ours[:5]
        where = f"event id {eid} ({event} at {m['ts']})"
        res.events += 1
        if int(m["ts"].replace(".", "")) != ts:
            res.bad(f"{where}: ts ours {ts}, trace-cmd {m['ts']}")
        if int(m["cpu"]) != cpu or int(m["pid"]) != pid:
            res.bad(f"{where}: cpu/pid ours {cpu}/{pid}, trace-cmd {m['cpu']}/{m['pid']}")
        if (comm or "<...>") != m["comm"].strip():
            res.bad(f"{where}: comm ours {comm!r}, trace-cmd {m['comm'].strip()!r}")
        if m.groupdict().get("instance") != instance_of.get(eid):
            res.bad(f"{where}: instance ours {instance_of.get(eid)!r}, trace-cmd {m.groupdict().get('instance')!r}")
        for cpu_l, n in pending_lost:
            got = lost.get(eid)
            if not got or got[1] != cpu_l or got[2] != n:
                res.bad(f"{where}: trace-cmd reports {n} events dropped on CPU {cpu_l} before it; ours {got}")
            res.lost_lines.append((cpu_l, n, eid))
        pending_lost = []
        fl = formats[event][1]
        values = split_fields(m["rest"], [f.name for f in fl])
        if values is None:
            res.bad(f"{where}: cannot split fields of {m['rest'][:160]!r}")
            continue
        for f, printed, mine in zip(fl, values, ours[5:]):
            if event == "kernel_stack" and f.name == "caller":
                check_stack_prefix(f, mine, printed, res, where)
            else:
                check_value(f, mine, printed, res, where)
    for event, left in rows.items():
        if left:
            res.bad(f"we have {len(left)} {event} events trace-cmd did not print")
    return res


def _has(con, table: str) -> bool:
    return bool(con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [table]).fetchall())


LAT_LINE = re.compile(r"^(?P<comm>.*?)-(?P<pid>\d+)\s+(?P<cpu>\d+)-0x(?P<flags>[0-9a-f]+)\s+(?P<ts>\d+\.\d{9}):")


def compare_flags(store: Path, trace: Path) -> Result:
    """`trace-cmd report -R -l` prints `CPU-0xFLAGS` (common_flags): compare with ours."""
    res = Result()
    con = duckdb.connect(str(store), read_only=True)
    ours = con.execute("SELECT id, ts, cpu, flags FROM events ORDER BY id").fetchall()
    con.close()
    it = iter(ours)
    proc = subprocess.run(
        [trace_cmd(), "report", "-R", "-t", "-l", str(trace)],
        capture_output=True, text=True, errors="surrogateescape", check=True,
    )
    for line in proc.stdout.splitlines():
        m = LAT_LINE.match(line)
        if not m:
            continue
        res.lines += 1
        eid, ts, cpu, flags = next(it, (None, None, None, None))
        res.events += 1
        if (ts, cpu, flags) != (int(m["ts"].replace(".", "")), int(m["cpu"]), int(m["flags"], 16)):
            res.bad(f"event {eid}: ours ts/cpu/flags {(ts, cpu, flags)}, trace-cmd {m['ts']} {m['cpu']} 0x{m['flags']}")
    if next(it, None) is not None:
        res.bad("we have more events than trace-cmd printed")
    return res
