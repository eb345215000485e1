"""SQL helpers every view, rule and replay query may use.

page_bytes(): the capture's page size (trace.dat records it; 4096 otherwise).
sym(event, field, value): the name an event's print format gives an enum value.
wb_reason(event, value): sym() of a writeback `reason`, named by number where unnamed.
flag_names(event, field, value): the text trace-cmd prints for a __print_flags or
  __print_symbolic field (I_DIRTY_PAGES|I_SYNC|0x20000), see advisor.kernel.print_fmt.
num(value): the number of a field that text captures print with its name, 3(FLUSH_DELALLOC).
kstr(value): the constant string a pointer field points at (trace.dat's printk formats).
ksym(value), ksymoff(value): the kernel symbol a pointer field names (trace.dat's kallsyms).
stalled_writes(): the writes during which their task waited on page writeback (a table).
calls_seen(view), longest_call(view): a syscall view's calls, those still running when the
  capture ended counted to its end (tables).
`__print_symbolic(REC->reason, {0, "background"}, {1, "vmscan"}, {2, "sync"}, ...)` in a
print_fmt: the names trace-cmd prints for an enum field. Numbers differ between kernels
(btrfs_flush_space's FLUSH_DELALLOC is 5 in 5.10 and in 6.18, ALLOC_CHUNK moved from 7 to
8 when FLUSH_DELALLOC_FULL came), so queries compare names, via sym().
"""

from __future__ import annotations

from advisor.kernel.print_fmt import ValueNames, value_names
from advisor.store.ddl import has_table

#: What each helper gives, for docs/data-contract.md.
HELPERS = (
    ("flag_names(event, field, value)",
     "the text trace-cmd report prints for a field its event's print format decodes with __print_flags or "
     "__print_symbolic: `flag_names('writeback_single_inode', 'state', 131200)` = `I_SYNC|0x20000` (bits the "
     "format does not name in hex), `flag_names('btrfs_flush_space', 'flags', 4)` = `METADATA`, "
     "`flag_names('writeback_start', 'reason', 2)` = `sync`; NULL when the format names no values for the field"),
    ("sym(event, field, value)",
     "an enum value's name from the print format (`sym('btrfs_flush_space', 'state', 5)` = `FLUSH_DELALLOC`), "
     "the value itself when unnamed: for comparing names, which stay when kernels renumber"),
    ("wb_reason(event, value)",
     "the name of a writeback event's `reason` (enum wb_reason): sym(event, 'reason', value), and where the capture does not "
     "name it (a text printed with `trace-cmd report -R`: `reason=2`) the first four by the numbers they have kept since "
     "0e175a1835ff (3.2): 0 background, 1 vmscan, 2 sync, 3 periodic"),
    ("num(value)", "the number of a field a text capture prints with its name: `num('3(FLUSH_DELAYED_REFS_NR)')` = 3"),
    ("kstr(value)",
     "the text trace-cmd report prints for a pointer field its print format shows with %s: the kernel's constant "
     "string at that address, from the trace.dat's copy of printk_formats (`kstr(msg)` of wbt_step = `scale up`, "
     "`kstr(s)` of rcu_utilization = `Start context switch`); the value as text when the capture has no string "
     "there (text captures print the string itself)"),
    ("ksym(value)",
     "the text trace-cmd report prints for a pointer field its print format shows with %ps: the kernel symbol at the "
     "greatest address not above the value, from the trace.dat's copy of /proc/kallsyms (`ksym(function)` of "
     "workqueue_execute_start = `wb_workfn`, the flusher's work); the address in hex when no symbol covers it or "
     "the file has no kallsyms (recorded where /proc/kallsyms could not be read); text captures print the symbol "
     "itself"),
    ("ksymoff(value)",
     "the same for %pS: the symbol and the offset into it (`ksymoff(caller_ip)` of xfs_ilock = "
     "`xfs_ilock_data_map_shared+0x19`)"),
    ("page_bytes()", "the capture's page size in bytes (4096 when it does not record one)"),
    ("calls_seen(view)",
     "every call of a syscall view (`calls_seen('sync_ops')`) with four more columns: `running` (seen to enter, "
     "not to return, no event lost after it began and no later call of its task: still running when the capture "
     "ended), `unresolved` (not returned, and the kernel dropped events after it began: its return may be among "
     "them), `until_ts` (its return; for a running call the capture's last event, which it outlasted; else NULL) "
     "and `ended`, the three in words ('returned', 'still running at the capture's end', 'return lost with dropped "
     "events', 'return not recorded')"),
    ("longest_call(view)",
     "the call of calls_seen(view) with the longest until_ts - start_ts: a sync(2) still running when the capture "
     "ended counts with the time it had run by then"),
    ("stalled_writes()",
     "the write syscalls (`write_ops`, complete) during which their task waited on page writeback (`page_waits`): "
     "pid, start_ts, end_ts, dur_ns, waits (how many), bdi and ino (of one of the waits); a table: "
     "`SELECT count(*) FROM stalled_writes()`"),
)

# A wait belongs to the write of its task that was running at the time: same pid,
# start_ts <= ts <= end_ts (a task is in one write at a time). Both sides are cut into
# buckets of the writes' mean duration, a write listed in each bucket it spans (3 per
# write at most on average), so a hash join on (pid, bucket) pairs them: it holds the
# waits and streams the writes past them. An ASOF join gave the same rows but sorted
# every write first: 2.6 M writes of dd with 901 waits, none inside one, peaked at
# 288 MiB that way and at 127 MiB this way, in the same time.
_STALLED_WRITES = """
WITH width AS (SELECT greatest(1, avg(end_ts - start_ts))::BIGINT AS ns FROM write_ops WHERE complete),
w AS (SELECT o.pid, o.start_ts, o.end_ts, unnest(range(o.start_ts // width.ns, o.end_ts // width.ns + 1)) AS bucket
      FROM write_ops o, width WHERE o.complete),
p AS (SELECT pw.pid, pw.ts, pw.bdi, pw.ino, pw.ts // width.ns AS bucket FROM page_waits pw, width)
SELECT w.pid, w.start_ts, w.end_ts, w.end_ts - w.start_ts AS dur_ns, count(*) AS waits,
       any_value(p.bdi) AS bdi, any_value(p.ino) AS ino
FROM w JOIN p ON p.pid = w.pid AND p.bucket = w.bucket AND p.ts BETWEEN w.start_ts AND w.end_ts
GROUP BY w.pid, w.start_ts, w.end_ts"""


def create(con) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP MACRO page_bytes() AS "
        "(SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 4096) FROM trace_info WHERE key = 'page_size')"
    )
    _flag_names_macro(con, _value_names(con))
    # Text captures already print the name: "reason=sync" is returned as is. btrfs prints
    # both, "state=3(FLUSH_DELAYED_REFS_NR)": num() reads the 3, sym() the name.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO num(v) AS "
        "TRY_CAST(regexp_extract(v::VARCHAR, '^\\s*(-?[0-9]+)', 1) AS BIGINT)"
    )
    con.execute(
        "CREATE OR REPLACE TEMP MACRO kstr(v) AS coalesce("
        "(SELECT any_value(p.text) FROM printk_strings p WHERE p.address = TRY_CAST(v::VARCHAR AS UBIGINT)), v::VARCHAR)"
    )
    # %ps / %pS: the symbol at the greatest address not above the pointer, when the
    # pointer is below the next symbol (past the last one, only its own address);
    # of several names at one address, the first listed. Otherwise the address in
    # hex, as trace-cmd prints it. Text captures print the symbol already.
    for name, text in (("ksym", "k.name"), ("ksymoff", "printf('%s+0x%x', k.name, a - k.address)")):
        con.execute(
            f"CREATE OR REPLACE TEMP MACRO {name}(v) AS (WITH p AS (SELECT TRY_CAST(v::VARCHAR AS UBIGINT) AS a) SELECT coalesce("
            f"(SELECT arg_min({text}, k.line) FROM kallsyms k WHERE k.address <= a AND (a < k.next_address OR k.address = a)), "
            "CASE WHEN a IS NULL THEN v::VARCHAR ELSE printf('0x%x', a) END) FROM p)"
        )
    con.execute(
        "CREATE OR REPLACE TEMP MACRO sym(ev, fld, v) AS coalesce("
        "(SELECT t.entries[list_position(list_transform(t.entries, lambda e: e.v), TRY_CAST(v::VARCHAR AS HUGEINT))].n "
        "FROM flag_tables t WHERE t.kind = 'symbolic' AND t.event = ev::VARCHAR AND t.field = fld::VARCHAR), "
        "nullif(regexp_extract(v::VARCHAR, '^-?[0-9]+\\((.*)\\)$', 1), ''), v::VARCHAR)"
    )

    # enum wb_reason came with 0e175a1835ff ("writeback: Add a 'reason' to
    # wb_writeback_work", 3.2) as BACKGROUND, TRY_TO_FREE_PAGES (since renamed VMSCAN),
    # SYNC, PERIODIC, LAPTOP_TIMER, FREE_MORE_MEM, ...; the first four kept their numbers,
    # later ones moved when FREE_MORE_MEM went. A `trace-cmd report -R` text prints
    # `writeback_start: bdi=252:1 ... sync_mode=0 ... reason=2` and has no format to name it.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO wb_reason(ev, v) AS CASE "
        "WHEN sym(ev, 'reason', v) = v::VARCHAR AND TRY_CAST(v::VARCHAR AS INTEGER) BETWEEN 0 AND 3 "
        "THEN ['background', 'vmscan', 'sync', 'periodic'][TRY_CAST(v::VARCHAR AS INTEGER) + 1] ELSE sym(ev, 'reason', v) END"
    )


# A call seen to enter and not to return (end_ts NULL) is one of three:
#   running:    still running when the capture ended: no event was lost after it began and
#               its task entered no later call of the view (a task is in one syscall at a
#               time). It ran at least until the capture's last event: the usual capture of
#               a stall, `trace-cmd record` stopped while sync(2) still hung.
#   unresolved: the kernel dropped events after it began (lost_events), so its return may
#               be among them, and an exit recorded later may be another call's.
#   neither:    its task entered a later call first; the return was never recorded.
_CALLS_SEEN = """
WITH c AS (SELECT q.*, NOT q.complete AND {lost} AS unresolved FROM query_table(v) q),
r AS (SELECT c.*, NOT c.complete AND NOT c.unresolved
             AND NOT EXISTS (SELECT 1 FROM query_table(v) o WHERE o.pid = c.pid AND o.start_ts > c.start_ts) AS running
      FROM c)
SELECT r.*, CASE WHEN r.complete THEN r.end_ts WHEN r.running THEN {end} END AS until_ts,
       CASE WHEN r.complete THEN 'returned' WHEN r.running THEN 'still running at the capture''s end'
            WHEN r.unresolved THEN 'return lost with dropped events' ELSE 'return not recorded' END AS ended
FROM r"""


def create_over_views(con) -> None:
    """The helpers that read domain views (a table macro binds its tables when created)."""
    con.execute(f"CREATE OR REPLACE TEMP MACRO stalled_writes() AS TABLE {_STALLED_WRITES}")
    # A marker's ts is the first event after its gap on its CPU; one without a time
    # could be anywhere.
    lost = ("EXISTS (SELECT 1 FROM lost_events m WHERE m.ts IS NULL OR m.ts > q.start_ts)"
            if has_table(con, "lost_events", "main") else "false")
    end = ("(SELECT max(TRY_CAST(value AS BIGINT)) FROM trace_info WHERE key = 'last_ts')"
           if has_table(con, "trace_info", "main") else "NULL::BIGINT")
    con.execute(f"CREATE OR REPLACE TEMP MACRO calls_seen(v) AS TABLE {_CALLS_SEEN.format(lost=lost, end=end)}")
    con.execute("CREATE OR REPLACE TEMP MACRO longest_call(v) AS TABLE "
                "SELECT * FROM calls_seen(v) WHERE until_ts IS NOT NULL ORDER BY until_ts - start_ts DESC, start_ts LIMIT 1")


def _value_names(con) -> dict[tuple[str, str], ValueNames]:
    """(event, field) → its table, for the event types the capture has events of: an
    `-e all` capture records 635 formats that print names and sees 51 of them, and
    parsing all 635 took 0.77 s of every command on it. A field printed by two tables
    (btrfs_flush_space's `flags=%llu(%s)` is one) keeps the first."""
    out: dict[tuple[str, str], ValueNames] = {}
    try:
        formats = con.execute("SELECT event, print_fmt FROM event_formats WHERE events > 0 AND print_fmt LIKE '%\\_\\_print\\_%' ESCAPE '\\'").fetchall()
    except Exception:  # noqa: BLE001 -- a store without formats (blktrace only): nothing to name
        formats = []
    for event, fmt in formats:
        for t in value_names(fmt or ""):
            out.setdefault((event, t.field), t)
    return out


def _flag_names_macro(con, tables: dict[tuple[str, str], ValueNames]) -> None:
    """flag_names(event, field, value): the text trace-cmd prints for the value, from the
    capture's own print format (I_DIRTY_PAGES|I_SYNC|0x20000, METADATA, background); a
    name a text capture printed comes back as is; NULL when the format names no values.

    In SQL rather than a Python function: registering one loads numpy (60 ms on every
    command, which reads a store through DuckDB alone otherwise). ValueNames.name is the same
    algorithm in Python: flags take each nonzero entry whose bits are all still set, in the
    format's order, and print what is left in hex (131201 with {1 I_DIRTY_SYNC} {128 I_SYNC}
    is I_DIRTY_SYNC|I_SYNC|0x20000); 0 prints the format's zero text or its entry for 0."""
    rows = []
    for (event, field), t in tables.items():
        head = (event, field, t.kind, t.delim, t.zero)
        # A table whose every entry is skipped still decodes: 0x20002 for 2 (sync-xfs-v6.dat).
        rows += [(*head, pos, str(v), n) for pos, (v, n) in enumerate(t.entries)] or [(*head, None, None, None)]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE flag_tables AS SELECT event, field, any_value(kind) AS kind, any_value(delim) AS delim, "
        "any_value(zero) AS zero, coalesce(list({'v': TRY_CAST(v AS HUGEINT), 'n': n} ORDER BY pos) FILTER (WHERE pos IS NOT NULL), []) AS entries "
        "FROM (SELECT unnest($1::VARCHAR[]) AS event, unnest($2::VARCHAR[]) AS field, unnest($3::VARCHAR[]) AS kind, unnest($4::VARCHAR[]) AS delim, "
        "unnest($5::VARCHAR[]) AS zero, unnest($6::INTEGER[]) AS pos, unnest($7::VARCHAR[]) AS v, unnest($8::VARCHAR[]) AS n) GROUP BY event, field",
        [[r[i] for r in rows] for i in range(8)],
    )
    # t: the field's table as one struct, from a subquery that names no column of the row
    # (read once per query, not joined to every row); x: the value as the u64 the kernel
    # stored (-1 is 0xffffffffffffffff). `rest - e.v` clears the entry's bits, all set in
    # `rest`. A lambda may not read t (a subquery): names are joined with \x1f, then t.delim.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO _flag_decode(t, x) AS CASE WHEN t IS NULL THEN NULL "
        "WHEN t.kind = 'symbolic' THEN coalesce(list_filter(t.entries, lambda e: e.v = x)[1].n, format('{:#x}', x)) "
        "WHEN x = 0 THEN coalesce(t.zero, list_filter(t.entries, lambda e: e.v = 0)[1].n, '') "
        "ELSE replace(list_transform([list_reduce(t.entries, lambda acc, e: CASE WHEN e.v <> 0 AND (acc.rest & e.v) = e.v "
        "THEN {'rest': acc.rest - e.v, 'names': list_append(acc.names, e.n)} ELSE acc END, {'rest': x, 'names': []::VARCHAR[]})], "
        "lambda r: array_to_string(list_concat(r.names, CASE WHEN r.rest <> 0 THEN [format('{:#x}', r.rest)] ELSE [] END), '\x1f'))[1], "
        "'\x1f', t.delim) END"
    )
    # Text captures: "flags=4(METADATA)" (btrfs prints both) gives METADATA, a name as is.
    con.execute(
        "CREATE OR REPLACE TEMP MACRO flag_names(ev, fld, v) AS CASE "
        "WHEN regexp_full_match(v::VARCHAR, '\\s*-?[0-9]+\\s*') THEN "
        "_flag_decode((SELECT t FROM flag_tables t WHERE t.event = ev::VARCHAR AND t.field = fld::VARCHAR), TRY_CAST(trim(v::VARCHAR, ' \t\n\r\f\v') AS HUGEINT) & 18446744073709551615::HUGEINT) "
        "WHEN regexp_full_match(v::VARCHAR, '\\s*-?[0-9]+\\((.*)\\)\\s*') THEN regexp_extract(v::VARCHAR, '^\\s*-?[0-9]+\\((.*)\\)\\s*$', 1) "
        "ELSE v::VARCHAR END"
    )
