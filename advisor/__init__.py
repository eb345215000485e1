"""Writeback Advisor.

For notebooks and scripts: `advisor.open(path)` → `advisor.Capture` (see advisor/api.py).
"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("writeback-advisor")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


def __getattr__(name: str):
    # importlib.metadata is slow to load: read the version only when asked for.
    if name == "__version__":
        return _version()
    # The API loads DuckDB, Arrow and the rules: only when asked for, so that
    # `import advisor.parsers` (and the CLI's start) stays as light as before.
    if name in ("open", "Capture"):
        from advisor import api

        return getattr(api, name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
