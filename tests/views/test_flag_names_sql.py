"""flag_names() is SQL (a Python function registered in DuckDB would load numpy on every
command); advisor.kernel.print_fmt.ValueNames.name is the decoder trace-cmd's output was
checked against. Both must give the same text for every table of these captures' print
formats: each entry's value, pairs of them, 0, all bits set, values past 2^63, negative
numbers (the u64 the kernel stored) and random words."""

from __future__ import annotations

import random

import pytest

from advisor.store import open_store
from advisor.views import attach
from advisor.views.macros import _value_names

CAPTURES = ("lab-btrfs-delalloc-overflush-stock-run1-v7-zstd.dat", "fsync-memcg-btrfs-run1-v7-zstd.dat", "sync-xfs-v6.dat")


def values(entries, rng: random.Random) -> set[int]:
    v = {0, 1, -1, 2**63, 2**64 - 1, 0x20000}
    v |= {e for e, _ in entries} | {e + 1 for e, _ in entries}
    v |= {a | b for (a, _), (b, _) in zip(entries, entries[1:])}
    v |= {rng.getrandbits(64) for _ in range(16)} | {rng.getrandbits(20) for _ in range(16)}
    return v


@pytest.mark.parametrize("name", CAPTURES)
def test_sql_flag_names_equal_the_python_decoder(name, store_of):
    rng = random.Random(name)
    with open_store(store_of(name)) as con:
        attach(con)
        tables = _value_names(con)
        assert tables
        for (event, field), t in tables.items():
            numbers = sorted(values(t.entries, rng))
            texts = [str(n) for n in numbers] + [f" {numbers[-1]}\t"]
            got = dict(con.execute("SELECT v, flag_names(?, ?, v) FROM unnest(?::VARCHAR[]) AS u(v)", [event, field, texts]).fetchall())
            want = {s: t.name(int(s)) for s in texts}
            assert got == want, (event, field, {k: (got[k], want[k]) for k in want if got[k] != want[k]})
        # Text captures print names: as is, or the name of "4(METADATA)"; NULL stays NULL;
        # a number of a field whose format names nothing is NULL.
        row = con.execute("SELECT flag_names('btrfs_flush_space', 'flags', '4(METADATA)'), flag_names('e', 'f', 'I_SYNC|I_DIRTY_PAGES'), "
                          "flag_names('e', 'f', NULL), flag_names('no_such_event', 'f', 5)").fetchone()
        assert row == ("METADATA", "I_SYNC|I_DIRTY_PAGES", None, None)
