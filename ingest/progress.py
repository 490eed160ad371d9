"""Progress of long stages (crawl, extract, embed, publish, export) with counts and rates.

Silent unless the command line switches it on (a terminal and no ``--quiet``);
pipeline code just reports ``stage(...).advance(n)``.  Rendering uses rich,
which Prefect already depends on.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

_lock = threading.Lock()
_progress = None  # a rich.progress.Progress while enabled


class _Stage:
    def __init__(self, task_id=None):
        self.task_id = task_id

    def advance(self, n: int = 1) -> None:
        if self.task_id is not None and _progress is not None:
            _progress.advance(self.task_id, n)


@contextmanager
def stage(description: str, total: int | None):
    """A counted stage; a no-op unless progress is enabled."""
    if _progress is None:
        yield _Stage()
        return
    with _lock:
        task_id = _progress.add_task(description, total=total)
    try:
        yield _Stage(task_id)
    finally:
        with _lock:
            _progress.update(task_id, completed=total if total is not None else None)
            _progress.stop_task(task_id)


@contextmanager
def enabled(on: bool):
    """Show progress on standard error for the duration (when ``on``)."""
    global _progress
    if not on:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    class _Rate(TextColumn):
        def __init__(self):
            super().__init__("")

        def render(self, task):
            speed = task.finished_speed or task.speed
            return super().render(task) if speed is None else f"{speed:,.1f}/s"

    _progress = Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    _progress.start()
    try:
        yield
    finally:
        _progress.stop()
        _progress = None
