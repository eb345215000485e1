"""Threshold fixtures of stable-page-wait: Writes that wait on page writeback (pwrite64 around folio_wait_writeback)."""

from __future__ import annotations

from advisor.problems.fixtures import MS, T0, Case, Snippet

def stable_page_wait(stall_ns: int, stalls: int = 1) -> Snippet:
    """`stalls` pwrite64s that each wait on page writeback and last stall_ns, plus 50 fast writes."""
    s = Snippet()
    t = T0
    for i in range(50):
        s.syscall(t, t + 10_000, "fio", 200, "pwrite64", 18, fd=3, buf=0x1000, count=4096, pos=4096 * i)
        t += 100_000
    for i in range(stalls):
        s.syscall(t, t + stall_ns, "fio", 200, "pwrite64", 18, fd=3, buf=0x1000, count=4096, pos=4096 * i)
        s.event(t + 1_000, "fio", 200, "folio_wait_writeback", name="7:0", ino=12, index=i)
        t += stall_ns + 100_000
    if not stalls:
        # a text capture shows an event only if it fired: without any page wait the capture
        # would read as "not recorded"; this one is the flusher's, outside every write
        s.event(t, "kworker/u8:1", 31, "folio_wait_writeback", name="7:0", ino=12, index=0)
    return s


CASES = [
    Case("stable-page-wait", "min_stall_p99_ms", "3.8.13", "3.9",
         lambda: stable_page_wait(1 * MS), lambda: stable_page_wait(1 * MS - 1_000)),
    Case("stable-page-wait", "min_stalls", "3.8.13", "3.9",
         lambda: stable_page_wait(1 * MS, stalls=1), lambda: stable_page_wait(1 * MS, stalls=0),
         coupled=("min_stall_p99_ms",)),
    Case("stable-page-wait", "min_stalls", "3.8.13", "3.9",
         lambda: stable_page_wait(1 * MS, stalls=2), lambda: stable_page_wait(1 * MS, stalls=1), value=2.0),
]
