"""Block I/O analysis over a store's blktrace tables (btt-style numbers)."""

from advisor.io.summary import io_summary

__all__ = ["io_summary"]
