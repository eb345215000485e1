"""ksym() / ksymoff(): a pointer field printed with %ps / %pS named as trace-cmd names
it, from the trace.dat's kallsyms (store table `kallsyms`). Checked against the
kallsyms trace-cmd dumps from the same file, on every pointer of the capture's
symbol fields and on addresses around each symbol the capture's pointers fall in."""

from __future__ import annotations

from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES, need_trace_cmd
from tests.parity.kallsyms import Symbols
from tests.parity.printfmt import report_conversions

SYMBOLS = "symbols-xfs-v7-zstd.dat"


def _symbol_fields(con) -> list[tuple[str, str, bool]]:
    """(table, field, with offset) of every field printed under %ps/%pS."""
    out = []
    for table, fields, fmt, n in con.execute("SELECT table_name, fields, print_fmt, events FROM event_formats WHERE events > 0").fetchall():
        convs = report_conversions(fmt, [f["name"] for f in fields if not f["name"].startswith("common_")])
        out += [(table, name, c.pext[0] in "SF") for name, c in convs.items() if c and c.conv == "p" and c.pext[:1] in ("s", "S", "f", "F")]
    return out


def test_every_pointer_is_named_as_trace_cmd_names_it(store_of):
    need_trace_cmd()
    syms = Symbols.of(SAMPLES / SYMBOLS)
    with open_store(store_of(SYMBOLS)) as con:
        attach(con)
        fields = _symbol_fields(con)
        assert {t for t, _, _ in fields} >= {"xfs_ilock", "workqueue_execute_start"}
        checked = 0
        for table, field, with_offset in fields:
            rows = con.execute(f'SELECT DISTINCT "{field}", ksym("{field}"), ksymoff("{field}") FROM "{table}"').fetchall()
            for v, name, named_at in rows:
                assert syms.accepts(v, name, with_offset=False), (table, field, hex(v), name)
                assert syms.accepts(v, named_at, with_offset=True), (table, field, hex(v), named_at)
                # Around the symbol: its first byte, its last, the next one's first.
                start = max(a for a in syms.addrs if a <= v)
                nxt = min(a for a in syms.addrs if a > start)
                for a in (start, nxt - 1, nxt):
                    got = con.execute("SELECT ksym(?::UBIGINT), ksymoff(?::UBIGINT)", [a, a]).fetchone()
                    assert syms.accepts(a, got[0], with_offset=False) and syms.accepts(a, got[1], with_offset=True), (hex(a), got)
                checked += 1
        assert checked > 20


def test_what_is_not_a_symbol_stays_a_number(store_of):
    with open_store(store_of(SYMBOLS)) as con:
        attach(con)
        first, last = con.execute("SELECT min(address), max(address) FROM kallsyms").fetchone()
        got = con.execute("SELECT ksym(?::UBIGINT), ksym(?::UBIGINT), ksymoff(?::UBIGINT), ksym(NULL)", [first - 1, last + 1, last]).fetchone()
        # Below the first symbol, past the last one (only its own address is named): hex, as trace-cmd prints it.
        assert got[:2] == (f"{first - 1:#x}", f"{last + 1:#x}")
        assert got[2].endswith("+0x0") and got[3] is None
    # A capture whose kallsyms was hidden: every pointer in hex.
    with open_store(store_of("all-events-ext4-v7-zstd.dat")) as con:
        attach(con)
        assert con.execute("SELECT count(*) FROM kallsyms").fetchone()[0] == 0
        rows = con.execute('SELECT DISTINCT "function", ksym("function") FROM workqueue_execute_start LIMIT 5').fetchall()
        assert rows and all(name == f"{v:#x}" for v, name in rows)
    # A text capture prints the symbol already: kept as printed.
    with open_store(store_of("tracefs-ext4.trace.txt")) as con:
        attach(con)
        assert con.execute("SELECT ksym('wb_workfn'), ksymoff('xfs_ilock+0x19')").fetchone() == ("wb_workfn", "xfs_ilock+0x19")
