"""Two captures of one workload, before and after a change: what differs, and whether
it is more than the noise of one run (see `noise.py` for the method)."""

from advisor.compare.document import compare_stores

__all__ = ["compare_stores"]
