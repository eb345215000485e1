"""The terminal summary of a findings table: verdicts by kernel, the worst hosts per rule.
Plain SQL over the Parquet files (DuckDB), the same any user can run (docs/fleet.md)."""

from __future__ import annotations

from pathlib import Path

import duckdb

VERDICTS_BY_KERNEL = """
SELECT kernel, verdict, count(DISTINCT capture) AS captures
FROM read_parquet('{table}/*.parquet')
GROUP BY ALL ORDER BY kernel, min(severity) DESC NULLS LAST, verdict"""

# Per rule, the hosts with the most severe verdict first, then the most captures flagged
# (signature-without-known-bug, at-risk or affected: severity 2 and up); hosts with none
# are left out (insufficient-data is not a finding of the problem).
WORST_HOSTS = """
WITH findings AS (SELECT * FROM read_parquet('{table}/*.parquet') WHERE verdict <> 'error'),
per_host AS (
  SELECT rule, host, max(severity) AS severity, count(*) FILTER (WHERE severity >= 2) AS captures_flagged,
         count(*) AS captures
  FROM findings GROUP BY rule, host),
worst AS (  -- each host's most severe capture; ties: the first by name, so every run names the same
  SELECT rule, host, verdict, capture AS worst_capture FROM findings
  QUALIFY row_number() OVER (PARTITION BY rule, host ORDER BY severity DESC, capture) = 1)
SELECT rule, host, verdict, captures_flagged, captures, worst_capture
FROM per_host JOIN worst USING (rule, host) WHERE severity >= 2
QUALIFY row_number() OVER (PARTITION BY rule ORDER BY severity DESC, captures_flagged DESC, host) <= {top}
ORDER BY rule, severity DESC, captures_flagged DESC, host"""

ERRORS = "SELECT DISTINCT capture, error FROM read_parquet('{table}/*.parquet') WHERE verdict = 'error' ORDER BY 1"


def summarize(table: Path, top: int = 3) -> dict:
    where = str(table).replace("'", "''")
    with duckdb.connect() as con:
        def rows(sql: str) -> list[dict]:
            cur = con.execute(sql.format(table=where, top=top))
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

        return {"table": str(table), "verdicts_by_kernel": rows(VERDICTS_BY_KERNEL), "worst_hosts": rows(WORST_HOSTS),
                "errors": rows(ERRORS)}
