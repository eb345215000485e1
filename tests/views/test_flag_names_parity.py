"""flag_names() against trace-cmd: for every field an event's print format prints through
__print_flags or __print_symbolic, the name the SQL macro gives each recorded value is the
text `trace-cmd report` prints for that event (state=I_SYNC|0x20000, gfp_flags=GFP_NOFS|
__GFP_HIGHMEM, flags=4(METADATA), reason=sync, state=0x20002 where the format left the
kernel's constants unexpanded)."""

from __future__ import annotations

import re
import subprocess
from collections import Counter

import pytest

from advisor.kernel.print_fmt import value_names
from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES, need_trace_cmd
from tests.parity.tracecmd_report import LINE

# btrfs flush states, space flags and inode states (left-over bits in hex); memcg reclaim's
# gfp_flags (multi-bit names first, "none" for 0); writeback reasons; a 6.x format whose
# inode-state table names constants the kernel did not expand (every entry skipped).
CASES = {
    "lab-btrfs-delalloc-overflush-stock-run1-v7-zstd.dat": {"btrfs_flush_space", "writeback_single_inode", "writeback_mark_inode_dirty", "writeback_start"},
    "fsync-memcg-btrfs-run1-v7-zstd.dat": {"mm_vmscan_memcg_reclaim_begin", "btrfs_flush_space"},
    "sync-xfs-v6.dat": {"writeback_single_inode", "writeback_single_inode_start", "writeback_mark_inode_dirty"},
}
_PAIR = re.compile(r"(?:^|\s)(\w+)=(\S*)")
_BOTH = re.compile(r"-?\d+\((.*)\)")  # btrfs prints number and name: flags=4(METADATA)


def printed(path) -> dict[tuple[str, str], Counter]:
    """(event, field) → Counter of (ts ns, text) as `trace-cmd report -t` prints them."""
    out: dict[tuple[str, str], Counter] = {}
    text = subprocess.run(["trace-cmd", "report", "-t", str(path)], capture_output=True, text=True, errors="surrogateescape", check=True).stdout
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        secs, ns = m["ts"].split(".")
        ts = int(secs) * 1_000_000_000 + int(ns)
        for name, value in _PAIR.findall(m["rest"]):
            both = _BOTH.fullmatch(value)
            out.setdefault((m["event"], name), Counter())[(ts, both.group(1) if both else value)] += 1
    return out


def theirs_corrected(theirs: Counter, t, zero_ts: set[int]) -> Counter:
    """Where trace-cmd prints a name that is not set: libtraceevent reads an entry whose
    value is a name the kernel did not expand (`{I_DIRTY_SYNC, "I_DIRTY_SYNC"}` in 6.x
    formats) as 0, so a value of 0 prints as the table's first such name (state=I_DIRTY_SYNC
    for a state of 0). flag_names() skips those entries and prints 0 as "" (nothing set)."""
    if not t.skipped or t.kind != "flags":
        return theirs
    first = re.search(r'"((?:[^"\\]|\\.)*)"', t.skipped[0]).group(1)
    fixed = Counter()
    for (ts, text), n in theirs.items():
        fixed[(ts, "" if ts in zero_ts and text == first and not t.entries else text)] += n
    return fixed


@pytest.mark.parametrize("name", sorted(CASES))
def test_flag_names_print_what_trace_cmd_prints(name, store_of):
    need_trace_cmd()
    report = printed(SAMPLES / name)
    compared: Counter = Counter()
    with open_store(store_of(name)) as con:
        attach(con)
        formats = con.execute("SELECT event, table_name, print_fmt FROM event_formats WHERE events > 0").fetchall()
        for event, table, fmt in formats:
            for t in value_names(fmt):
                theirs = report.get((event, t.field))
                if theirs is None:
                    continue  # printed under another label (root=5(FS_TREE) for root_objectid)
                rows = con.execute(f'SELECT ts, "{t.field}", flag_names(?, ?, "{t.field}") FROM "{table}"', [event, t.field]).fetchall()
                ours = Counter((ts, name) for ts, _, name in rows)
                theirs = theirs_corrected(theirs, t, {ts for ts, raw, _ in rows if str(raw) == "0"})
                assert ours == theirs, (event, t.field, (ours - theirs).most_common(3), (theirs - ours).most_common(3))
                compared[event] += sum(ours.values())
    assert CASES[name] <= set(compared), (CASES[name] - set(compared), compared)


def test_a_zero_flag_value_prints_as_trace_cmd_prints_it(store_of):
    """writeback_mark_inode_dirty's state 0 prints as nothing (`state= flags=I_DIRTY_PAGES`)."""
    with open_store(store_of("lab-btrfs-delalloc-overflush-stock-run1-v7-zstd.dat")) as con:
        attach(con)
        rows = con.execute("SELECT DISTINCT flag_names('writeback_mark_inode_dirty', 'state', state) FROM writeback_mark_inode_dirty WHERE state = 0").fetchall()
    assert rows == [("",)]


@pytest.mark.parametrize("name", ["fsync-memcg-btrfs-run1-v7-zstd.dat", "fsync-memcg-btrfs-run3-tracefs.dat"])
def test_reclaim_view_names_the_allocation_as_trace_cmd_prints_it(name, store_of):
    """The `reclaim` view's memcg episodes carry the allocation that entered reclaim:
    order and gfp_names as `trace-cmd report` prints mm_vmscan_memcg_reclaim_begin."""
    need_trace_cmd()
    report = printed(SAMPLES / name)
    with open_store(store_of(name)) as con:
        attach(con)
        rows = con.execute("SELECT start_ts, alloc_order, gfp_flags, gfp_names FROM reclaim WHERE kind = 'memcg'").fetchall()
    assert rows, "no memcg reclaim in the sample"
    assert Counter((ts, names) for ts, _, _, names in rows) == report[("mm_vmscan_memcg_reclaim_begin", "gfp_flags")]
    assert Counter((ts, str(order)) for ts, order, _, _ in rows) == report[("mm_vmscan_memcg_reclaim_begin", "order")]
    assert all(flags is not None for _, _, flags, _ in rows)  # the numbers are in the capture too
