"""One trace buffer's copy of an event type recorded in two.

The kernel writes an event to every trace buffer that enables it: after `trace-cmd record
-e block:block_rq_issue -B wa -e block`, each request issue is in the file twice, once in
the top buffer and once in instance "wa" (`trace-cmd report` prints both, the second
prefixed "wa:"). The ingest counts such types in parse_stats (severity 'warning', name
"in_two_buffers:SYSTEM:EVENT"); here the views read only the buffer that holds the most
of them (the top one on a tie), so a request is not issued twice. The raw tables keep
every copy, and `instance_events` names each event's buffer.
"""

from __future__ import annotations

from advisor.store.ddl import ident, literal
from advisor.views.present import Present

_PREFIX = "one_buffer_"


def keep_one_buffer(con, present: Present) -> dict[str, str]:
    """Point `present` at a temporary view of one buffer's events for each event type
    recorded in several; returns "system:event" → the buffer kept ("top" or the instance)."""
    doubled = con.execute("SELECT substr(name, length('in_two_buffers:') + 1) FROM parse_stats "
                          "WHERE severity = 'warning' AND starts_with(name, 'in_two_buffers:') AND count > 0").fetchall()
    kept: dict[str, str] = {}
    for (key,) in doubled:
        found = present.tables.get(key)
        if found is None:
            continue
        table = found[0]
        buffer, rows = con.execute(
            f"SELECT i.instance, count(*) FROM {ident(table)} t LEFT JOIN instance_events i USING (id) "
            "GROUP BY i.instance ORDER BY count(*) DESC, i.instance IS NULL DESC, i.instance LIMIT 1").fetchone()
        view = _PREFIX + table
        where = "NOT EXISTS (SELECT 1 FROM instance_events i WHERE i.id = t.id)" if buffer is None else \
            f"EXISTS (SELECT 1 FROM instance_events i WHERE i.id = t.id AND i.instance = {literal(buffer)})"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {ident(view)} AS SELECT * FROM {ident(table)} t WHERE {where}")
        present.tables[key] = (view, int(rows))
        present.columns[view] = present.columns.get(table, set())
        kept[key] = "top" if buffer is None else buffer
    return kept
