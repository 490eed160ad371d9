"""Progress and timing of long stages (fetch, ingest, extract, tables, embed, index, publish).

Pipeline code reports ``with stage("embed", n, unit="texts") as s: s.advance(k)``.  Every stage is
timed into the current :func:`recording` (a task collects its own, so the numbers travel back from
a thread or a Dask worker in the task's result).  What a person sees is chosen by the command line
with :func:`enabled`: rich progress bars at a terminal, or, in a log (cron, a Prefect worker, CI),
plain lines on standard error: a start and an end line per stage and at most one line every
``every`` seconds in between.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import TextIO

BARS, LINES = "bars", "lines"
# seconds between two progress lines of one stage in a log; the environment may override
PROGRESS_EVERY_ENV = "TRUSTINDEX_PROGRESS_EVERY"
DEFAULT_EVERY_S = 10.0

_lock = threading.Lock()
_progress = None  # a rich.progress.Progress while bars are shown
_lines: _LineReporter | None = None  # while lines are written
_recording: contextvars.ContextVar[list[dict] | None] = contextvars.ContextVar("trustindex_stages", default=None)


def progress_every() -> float:
    raw = os.environ.get(PROGRESS_EVERY_ENV)
    try:
        return float(raw) if raw else DEFAULT_EVERY_S
    except ValueError:
        raise ValueError(f"{PROGRESS_EVERY_ENV}={raw!r}: expected a number of seconds") from None


class _LineReporter:
    """Plain progress lines at a bounded rate; ``clock`` is injectable so the bound can be tested."""

    def __init__(self, every: float, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self.every, self.stream, self.clock = every, stream, clock

    def write(self, text: str) -> None:
        with _lock:
            self.stream.write(f"trustindex: {text}\n")
            self.stream.flush()


class _Stage:
    def __init__(self, name: str, source: str | None, total: int | None, unit: str | None):
        self.name, self.source, self.total, self.unit = name, source, total, unit
        self.label = f"{name} {source}" if source else name
        self.done = 0
        self.extra: dict = {}
        self.extra_text = ""
        self.task_id = None
        self._clock = _lines.clock if _lines is not None else time.monotonic
        self.started = self._clock()
        self._last_line = self.started

    def advance(self, n: int = 1, status: str | None = None) -> None:
        """``n`` more done; ``status``: the text beside the count as of this step (one line shows both, so the two
        never disagree: "19/50 sources" beside "18/50 done" was a count and a status a step apart)."""
        self.done += n
        if self.task_id is not None and _progress is not None:
            _progress.advance(self.task_id, n)
        if status is not None:
            self.status(status)  # writes the line
        else:
            self._line()

    def status(self, text: str) -> None:
        """What the stage's count alone does not say (sources queued, texts left, an ETA): beside the bar, or in
        its next line (lines keep their bounded rate)."""
        self.extra_text = text
        if self.task_id is not None and _progress is not None:
            _progress.update(self.task_id, description=f"{self.label} ({text})")
        self._line()

    def _line(self) -> None:
        if _lines is not None:
            now = _lines.clock()
            if now - self._last_line >= _lines.every:
                self._last_line = now
                of = f"/{self.total:,}" if self.total is not None else ""
                rate = _rate(self.done, now - self.started)
                _lines.write(
                    f"{self.label}: {self.done:,}{of} {self.unit or ''} ({now - self.started:.1f} s"
                    + (f", {rate:,.1f}/s" if rate is not None else "")
                    + ")"
                    + (f"; {self.extra_text}" if self.extra_text else "")
                )

    def note(self, **extra) -> None:
        """Figures the record keeps beside the count (an embed stage's cache hits)."""
        self.extra.update(extra)

    def record(self, seconds: float) -> dict:
        count = self.done if self.total is None else max(self.done, self.total)
        out: dict = {"stage": self.name, "source": self.source, "seconds": round(max(seconds, 0.0), 4)}
        if self.unit is not None:
            out.update(count=count, unit=self.unit, per_second=_rate(count, seconds))
        if "megabytes" in self.extra and seconds > 0:  # bytes read and hashed, at publish
            out["mb_per_second"] = round(self.extra["megabytes"] / seconds, 1)
        return out | self.extra


def _rate(count: int, seconds: float) -> float | None:
    return round(count / seconds, 1) if count and seconds > 0 else None


@contextmanager
def stage(name: str, total: int | None = None, unit: str | None = None, source: str | None = None):
    """A timed stage of ``total`` items of ``unit`` (files, texts, chunks); shown as enabled, recorded if recording."""
    s = _Stage(name, source, total, unit)
    if _progress is not None:
        with _lock:
            s.task_id = _progress.add_task(s.label, total=total)
    if _lines is not None:
        _lines.write(f"{s.label}: started" + (f" ({total:,} {unit or ''})" if total is not None else ""))
    try:
        yield s
    finally:
        seconds = s._clock() - s.started
        rec = s.record(seconds)
        if s.task_id is not None and _progress is not None:
            with _lock:
                _progress.update(s.task_id, completed=total if total is not None else None)
                _progress.stop_task(s.task_id)
        if _lines is not None:
            _lines.write(f"{s.label}: done, {describe(rec)}")
        stages = _recording.get()
        if stages is not None:
            stages.append(rec)


@contextmanager
def recording():
    """Collect the records of the stages run in this context (this thread) into the yielded list."""
    stages: list[dict] = []
    token = _recording.set(stages)
    try:
        yield stages
    finally:
        _recording.reset(token)


def describe(rec: dict) -> str:
    """One stage record in words: ``2.31 s, 120 texts, 51.9/s, 8 from cache``."""
    count = [f"{rec['count']:,} {rec['unit']}"] if rec.get("unit") else []
    return ", ".join([f"{rec['seconds']:.2f} s", *count, *rates(rec)])


def rates(rec: dict) -> list[str]:
    """A stage record's throughput figures in words (none for a stage without a count)."""
    out = [f"{rec['per_second']:,.1f}/s"] if rec.get("per_second") is not None else []
    if "cache_hits" in rec:
        out.append(f"{rec['cache_hits']:,} from cache")
    if rec.get("shared"):  # texts another source of the run submitted first (and counted)
        out.append(f"{rec['shared']:,} shared with other sources")
    if rec.get("counted_by_sources"):  # the build found what the sources' records count
        out.append(f"{rec['counted_by_sources']:,} counted by the sources")
    if "encoded" in rec and rec.get("stage") == "drain":
        out.append(f"{rec['encoded']:,} encoded")
    if "mb_per_second" in rec:
        out.append(f"{rec['megabytes']:,.1f} MB at {rec['mb_per_second']:,.1f} MB/s")
    return out


def timing_lines(stages: list[dict]) -> list[str]:
    """``stage [source]: figures``, one line per recorded stage, in run order."""
    return [f"{r['stage']}{' ' + r['source'] if r.get('source') else ''}: {describe(r)}" for r in stages]


@contextmanager
def enabled(mode: str | bool | None, every: float | None = None, stream: TextIO | None = None, clock=None):
    """Show progress on standard error for the duration: ``BARS`` (or True) at a terminal, ``LINES`` in a log."""
    global _progress, _lines
    if mode == LINES:
        _lines = _LineReporter(
            progress_every() if every is None else every, stream or sys.stderr, clock or time.monotonic
        )
        try:
            yield
        finally:
            _lines = None
        return
    if mode not in (True, BARS):
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
