"""Writeback Advisor.

For notebooks and scripts: `advisor.open(path)` → `advisor.Capture` (see advisor/api.py).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("writeback-advisor")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"


def __getattr__(name: str):
    # The API loads DuckDB, Arrow and the rules: only when asked for, so that
    # `import advisor.parsers` (and the CLI's start) stays as light as before.
    if name in ("open", "Capture"):
        from advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
