"""The `advisor` command line (Typer + Rich). Commands only wire arguments to
the store and print; the work is in advisor.store and friends."""

import os

# Before anything loads pyarrow: the allocator of every Arrow buffer the command
# makes (store/parts.py says why the system one). A user's own setting wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
