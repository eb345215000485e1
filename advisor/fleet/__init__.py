"""Many captures at once: every rule over every capture, one row per capture and rule,
as a Parquet table (findings/part-*.parquet), computed by local processes or by Spark."""

from advisor.fleet.inputs import expand
from advisor.fleet.rows import capture_rows, schema
from advisor.fleet.run import analyze_fleet

__all__ = ["analyze_fleet", "capture_rows", "expand", "schema"]
