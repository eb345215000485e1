"""The `advisor` command line (Typer + Rich). Commands only wire arguments to
the store and print; the work is in advisor.store and friends."""

import os

# Before anything loads pyarrow (the fleet commands and the Python API do): the
# allocator of every Arrow buffer they make. pyarrow's default, mimalloc in its
# Linux wheels, kept ~45 MiB more resident than the system allocator on the same
# work. A user's own setting wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
