"""The DuckDB store: one database per incident (an ftrace capture and/or
blktrace device sets), built from the parsers' Arrow batches, with the tables
and views of DESIGN.md's data contract."""

from advisor.store.cache import open_store, store_for
from advisor.store.ingest import IngestResult, ingest, ingest_trace

__all__ = ["IngestResult", "ingest", "ingest_trace", "open_store", "store_for"]
