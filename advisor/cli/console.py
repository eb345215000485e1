"""Where output goes: people read stderr (Rich), scripts read stdout."""

from __future__ import annotations

import json
import sys

from rich.console import Console

#: Human-oriented output: tables, progress bars, warnings.
err = Console(stderr=True, highlight=False)
#: Results the user asked for (query results, --json documents).
out = Console(highlight=False, soft_wrap=True)


def print_json(doc) -> None:
    """A JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, default=_default) + "\n")
    sys.stdout.flush()


def _default(o):
    if isinstance(o, (bytes, bytearray)):
        return o.hex()
    if hasattr(o, "isoformat"):
        return o.isoformat()
    return str(o)


def warn(message: str) -> None:
    err.print(f"[yellow]warning:[/] {message}", markup=True, highlight=False, soft_wrap=True)
