"""A bytes-read progress bar on stderr for anything that may take a while."""

from __future__ import annotations

import contextlib
import time

from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from advisor.cli.console import err


@contextlib.contextmanager
def bytes_progress(label: str):
    """Yields a callback(done, total). The bar appears only once the work has
    run for half a second, so quick jobs print nothing."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # on a pipe, a transient bar leaves an empty line behind
    )
    task = None
    started = time.monotonic()

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            if time.monotonic() - started < 0.5:
                return
            progress.start()
            task = progress.add_task(label, total=total)
        progress.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if task is not None:
            progress.stop()
