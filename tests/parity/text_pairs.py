"""Compare a text capture's store with the store of the trace.dat it was
printed from (same ring buffer), event by event."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tests.parity.printfmt import field_conversions
from tests.parity.tracecmd_report import Field, Result, check_value

# Kernel 6.x trace_flag_type bits (include/linux/trace_events.h).
IRQS_OFF, NEED_RESCHED_LAZY, NEED_RESCHED, HARDIRQ, SOFTIRQ, PREEMPT_RESCHED, NMI, BH_OFF = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80,
)


def latency_flags(flags: int, pc: int, columns: int) -> str:
    """The irq-info column as kernel 6.x prints it (trace_print_lat_fmt)."""
    nmi, hard, soft, bh = flags & NMI, flags & HARDIRQ, flags & SOFTIRQ, flags & BH_OFF
    irqs = "D" if flags & IRQS_OFF and bh else "d" if flags & IRQS_OFF else "b" if bh else "."
    resched = {
        NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED: "B",
        NEED_RESCHED | PREEMPT_RESCHED: "N",
        NEED_RESCHED_LAZY | PREEMPT_RESCHED: "L",
        NEED_RESCHED | NEED_RESCHED_LAZY: "b",
        NEED_RESCHED: "n",
        PREEMPT_RESCHED: "p",
        NEED_RESCHED_LAZY: "l",
    }.get(flags & (NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED), ".")
    ctx = "Z" if nmi and hard else "z" if nmi else "H" if hard and soft else "h" if hard else "s" if soft else "."
    depth = f"{pc & 0xf:x}" if pc & 0xf else "."
    migrate = f"{pc >> 4:x}" if pc >> 4 else "."
    return (irqs + resched + ctx + depth + migrate)[:columns]


def usecs(ns: int) -> int:
    """Kernel and trace-cmd print µs rounded half up: ns2usecs() adds 500."""
    return (ns + 500) // 1000


@dataclass
class TextResult(Result):
    compared_fields: Counter = field(default_factory=Counter)


def compare_text(text_store: Path, dat_store: Path, precision_ns: int) -> TextResult:
    res = TextResult()
    b = duckdb.connect(str(dat_store), read_only=True)
    t = duckdb.connect(str(text_store), read_only=True)
    bin_events = b.execute("SELECT id, ts, cpu, pid, comm, event, flags, preempt_count FROM events ORDER BY id").fetchall()
    txt_events = t.execute("SELECT id, ts, cpu, pid, comm, event FROM events ORDER BY id").fetchall()
    has_flags = "flags" in [r[0] for r in t.execute("DESCRIBE events").fetchall()]
    txt_flags = dict(t.execute("SELECT id, flags FROM events").fetchall()) if has_flags else {}
    if len(bin_events) != len(txt_events):
        res.bad(f"{len(txt_events)} text events, {len(bin_events)} in the trace.dat")
    formats = {}
    # "dev %d,%d ino %lu ... mode 0%o": the text parser reads these lines' mode as octal itself.
    octal_read = set()
    for table, event, fields, fmt in b.execute("SELECT table_name, event, fields, print_fmt FROM event_formats").fetchall():
        convs = field_conversions(fmt)
        if fmt.startswith('"dev %d,%d ') or fmt.startswith('"dev %d:%d '):
            octal_read.add(event)
        formats[event] = (table, {f["name"]: Field(f["name"], f["type"], f["size"], f["signed"], convs.get(f["name"])) for f in fields})
    bin_rows = _rows_by_id(b)
    txt_rows = _rows_by_id(t)
    # ... when the line is printed so ("dev 7,0 ino 12 ... mode 0100644"; -R prints "mode=100644").
    dev_first_ids = set()
    for (table,) in t.execute("SELECT table_name FROM event_formats WHERE list_contains(?, event)", [sorted(octal_read)]).fetchall():
        dev_first_ids.update(i for (i,) in t.execute(f'SELECT id FROM "{table}" WHERE starts_with(info, \'dev \')').fetchall())
    for be, te in zip(bin_events, txt_events):
        bid, bts, bcpu, bpid, bcomm, bev, bflags, bpc = be
        tid, tts, tcpu, tpid, tcomm, tev = te
        where = f"text event {tid} ({tev})"
        res.events += 1
        want_ts = bts if precision_ns == 1 else usecs(bts) * 1000
        # The k-th line printed at one microsecond is stored k ns after it (its order).
        if not 0 <= tts - want_ts < precision_ns or (tcpu, tpid, tev) != (bcpu, bpid, bev):
            res.bad(f"{where}: text ts/cpu/pid/event {(tts, tcpu, tpid, tev)} vs trace.dat {(want_ts, bcpu, bpid, bev)}")
        if tcomm != (bcomm or "<...>"):
            res.bad(f"{where}: comm {tcomm!r} vs {bcomm!r}")
        if has_flags and txt_flags.get(tid) is not None:
            printed = txt_flags[tid]
            if printed != latency_flags(bflags, bpc, len(printed)):
                res.bad(f"{where}: flags {printed!r} vs trace.dat flags={bflags:#x} preempt_count={bpc:#x}")
        bvals = bin_rows.get(bid, {})
        for key, tval in txt_rows.get(tid, {}).items():
            if tval is None or key not in bvals or bev not in formats or key not in formats[bev][1]:
                res.unchecked[f"{bev}.{key}"] += 1
                continue
            f = formats[bev][1][key]
            bval = bvals[key]
            if isinstance(tval, int) and isinstance(bval, int):
                # The text parser reads digits as decimal (it cannot see the
                # print fmt); a field printed with %o or %x (no 0x) means
                # those digits in that base.
                read_as_octal = key == "mode" and tid in dev_first_ids
                if f.conv and f.conv.conv in "oxX" and not f.conv.zero_x and tval >= 0 and not read_as_octal:
                    tval = int(str(tval), 8 if f.conv.conv == "o" else 16)
                res.compared_fields[f"{bev}.{key}"] += 1
                res.values += 1
                mask = (1 << (8 * f.size)) - 1 if f.size in (1, 2, 4, 8) else (1 << 64) - 1
                if (tval & mask) != (bval & mask):
                    res.bad(f"{where} {key}: text {tval}, trace.dat {bval}")
            elif isinstance(tval, str) and isinstance(bval, (int, bool)) and not tval.lstrip("-").isdigit():
                # Printed symbolically by the print fmt (__print_flags, %ps...).
                res.unchecked[f"{bev}.{key} (symbolic)"] += 1
            else:
                res.compared_fields[f"{bev}.{key}"] += 1
                check_value(f, bval, str(tval), res, where)
    b.close()
    t.close()
    return res


def _rows_by_id(con) -> dict[int, dict]:
    """id → {field: value} for every event table of a store (event fields only)."""
    out: dict[int, dict] = {}
    text = con.execute("SELECT value FROM trace_info WHERE key = 'format'").fetchone()[0] == "ftrace-text"
    for (table,) in con.execute("SELECT table_name FROM event_formats WHERE events > 0").fetchall():
        names = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
        # Views list the 8 common columns first; text stores end with the printed text.
        fields = names[8:-1] if text else names[8:]
        if not fields:
            continue
        cols = ", ".join(f'"{c}"' for c in [names[0]] + fields)
        for row in con.execute(f'SELECT {cols} FROM "{table}"').fetchall():
            out[row[0]] = dict(zip(fields, row[1:]))
    return out
