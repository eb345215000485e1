"""Memory reclaim, whichever way the capture shows it: direct reclaim by allocating
tasks, kswapd, reclaim inside a memory cgroup's limit (memory.max), and the LRU
shrinking and page writes it does.

A workload confined by memory.max never wakes kswapd or enters global direct reclaim:
its allocations reclaim through try_to_free_mem_cgroup_pages, traced as
mm_vmscan_memcg_reclaim_begin/end, and every pass shrinks LRU lists
(mm_vmscan_lru_shrink_inactive). So `reclaim` combines every source it finds, one
`kind` each.
"""

from __future__ import annotations

from advisor.views.model import Column, Source, View

# begin/end pairs per task: an end completes the task's latest begin before it.
_PAIRED = """
SELECT '{kind}' AS kind, b.pid, b.comm, b.ts AS start_ts, e.ts AS end_ts, e.ts - b.ts AS dur_ns, {reclaimed} AS nr_reclaimed,
       {alloc}
FROM {begin} b ASOF LEFT JOIN (SELECT ts, pid{end_fields} FROM {end}) e ON e.pid = b.pid AND e.ts >= b.ts"""


def _alloc(t, alias: str) -> str:
    """The allocation that entered reclaim, from the begin event: its order, its gfp
    flags and their names as trace-cmd prints them, from the capture's own print format
    (mm_vmscan_memcg_reclaim_begin: order=0 gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|
    __GFP_HARDWALL). A text capture prints only the names: gfp_flags is NULL there."""
    order = f'TRY_CAST({alias}."order" AS INTEGER)' if t.has("order") else "NULL::INTEGER"
    if not t.has("gfp_flags"):
        return f"{order} AS alloc_order, NULL::UBIGINT AS gfp_flags, NULL::VARCHAR AS gfp_names"
    event = t.event.split(":")[-1]
    return (f"{order} AS alloc_order, TRY_CAST({alias}.gfp_flags AS UBIGINT) AS gfp_flags, "
            f"flag_names('{event}', 'gfp_flags', {alias}.gfp_flags) AS gfp_names")


def _paired(kind: str, reclaimed: str = "e.nr_reclaimed", end_fields: str = ", nr_reclaimed"):
    return lambda t, p: _PAIRED.format(kind=kind, begin=t[0], end=t[1], reclaimed=reclaimed, end_fields=end_fields,
                                       alloc=_alloc(t[0], "b"))


def _begin_only(kind: str):
    """Begin events without their ends: when each episode started, not how long it ran."""
    return lambda t, p: (f"SELECT '{kind}' AS kind, pid, comm, ts AS start_ts, NULL::BIGINT AS end_ts, NULL::BIGINT AS dur_ns, "
                         f"NULL::BIGINT AS nr_reclaimed, {_alloc(t[0], t[0])} FROM {t[0]}")


def _kswapd(tables: list[str], present) -> str:
    """kswapd wakes per NUMA node and sleeps again (mm_vmscan_kswapd_sleep, by nid)."""
    wake, sleep = tables
    return f"""
        SELECT 'kswapd' AS kind, w.pid, w.comm, w.ts AS start_ts, s.ts AS end_ts, s.ts - w.ts AS dur_ns, NULL AS nr_reclaimed,
               {_alloc(wake, "w")}
        FROM {wake} w ASOF LEFT JOIN (SELECT ts, nid FROM {sleep}) s ON s.nid = w.nid AND s.ts >= w.ts"""


def _instant(kind: str, reclaimed: str):
    return lambda t, p: (f"SELECT '{kind}' AS kind, pid, comm, ts AS start_ts, ts AS end_ts, 0 AS dur_ns, {reclaimed} AS nr_reclaimed, "
                         f"{_alloc(t[0], t[0])} FROM {t[0]}")


#: Filled where the source's first event has the field (kswapd_wake: the order only).
_ALLOC = (("alloc_order", "order"), ("gfp_flags", "gfp_flags"), ("gfp_names", "gfp_flags"))


_EPISODES = (
    ("direct", "direct reclaim", "vmscan:mm_vmscan_direct_reclaim_begin", "vmscan:mm_vmscan_direct_reclaim_end"),
    ("memcg", "memcg reclaim", "vmscan:mm_vmscan_memcg_reclaim_begin", "vmscan:mm_vmscan_memcg_reclaim_end"),
    ("memcg_softlimit", "memcg soft-limit reclaim", "vmscan:mm_vmscan_memcg_softlimit_reclaim_begin",
     "vmscan:mm_vmscan_memcg_softlimit_reclaim_end"),
)

RECLAIM = View(
    "reclaim",
    "memory reclaim: direct, kswapd, memcg (memory.max), LRU shrinking and pages written by reclaim, one kind each",
    (Column("kind", "VARCHAR", "direct, kswapd, memcg, memcg_softlimit, lru_shrink or reclaim_write"),
     Column("pid", "INTEGER", "the reclaiming task"), Column("comm", "VARCHAR", "its name"),
     Column("start_ts", "BIGINT", "begin, ns (the event's time for instant kinds)"),
     Column("end_ts", "BIGINT", "end, ns; NULL when not seen"), Column("dur_ns", "BIGINT", "end_ts - start_ts"),
     Column("nr_reclaimed", "BIGINT", "pages reclaimed"),
     Column("alloc_order", "INTEGER", "order of the allocation that entered reclaim (kswapd: of the one that woke it)"),
     Column("gfp_flags", "UBIGINT", "its gfp flags"),
     Column("gfp_names", "VARCHAR", "their names as trace-cmd prints them (GFP_NOFS|__GFP_HIGHMEM|...)")),
    (
        *(s for kind, label, begin, end in _EPISODES for s in (
            Source(label, ((begin,), (end,)), _paired(kind), fields=((), ("nr_reclaimed",)), kind=kind, optional=_ALLOC),
            Source(f"{label} (starts only)", ((begin,),), _begin_only(kind), kind=kind, recording=(begin, end), optional=_ALLOC,
                   lacks=f"{label}: when each episode ended and what it reclaimed ({end} not recorded)"))),
        Source("kswapd", (("vmscan:mm_vmscan_kswapd_wake",), ("vmscan:mm_vmscan_kswapd_sleep",)), _kswapd,
               fields=(("nid",), ("nid",)), kind="kswapd", optional=_ALLOC),
        Source("kswapd (wake-ups only)", (("vmscan:mm_vmscan_kswapd_wake",),), _begin_only("kswapd"), kind="kswapd", optional=_ALLOC,
               recording=("vmscan:mm_vmscan_kswapd_wake", "vmscan:mm_vmscan_kswapd_sleep"),
               lacks="kswapd: when it went back to sleep (mm_vmscan_kswapd_sleep not recorded)"),
        Source("LRU shrinking", (("vmscan:mm_vmscan_lru_shrink_inactive",),), _instant("lru_shrink", "nr_reclaimed"),
               fields=(("nr_reclaimed",),), optional=_ALLOC),
        Source("reclaim writes", (("vmscan:mm_vmscan_write_folio", "vmscan:mm_vmscan_writepage"),), _instant("reclaim_write", "1"),
               optional=_ALLOC),
    ),
    combines=True,
)

VIEWS = (RECLAIM,)
