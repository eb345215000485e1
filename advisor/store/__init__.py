"""The DuckDB store: one database per capture, built from the parsers' Arrow
batches, with the tables and views of DESIGN.md's data contract."""

from advisor.store.ingest import IngestResult, ingest_trace
from advisor.store.cache import open_store, store_for

__all__ = ["IngestResult", "ingest_trace", "open_store", "store_for"]
