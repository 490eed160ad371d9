"""Stage timing and plain progress lines (runtime/progress.py), with a clock the test moves by hand."""

from __future__ import annotations

import io

import pytest

from trustindex.runtime import progress


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_bounded_per_stage_with_a_start_and_an_end():
    clock, out = FakeClock(), io.StringIO()
    with progress.enabled(progress.LINES, every=5.0, stream=out, clock=clock), progress.recording() as stages:
        with progress.stage("embed", 100, unit="texts") as s:
            for _ in range(50):  # 50 advances over 25 s: at most one line per 5 s between start and end
                clock.now += 0.5
                s.advance(2)
            s.note(cache_hits=7)
    lines = out.getvalue().splitlines()
    assert lines[0] == "trustindex: embed: started (100 texts)"
    middle = lines[1:-1]
    assert len(middle) == 5, lines
    assert middle[0] == "trustindex: embed: 20/100 texts (5.0 s, 4.0/s)"
    assert lines[-1] == "trustindex: embed: done, 25.00 s, 100 texts, 4.0/s, 7 from cache"
    assert stages == [
        {
            "stage": "embed",
            "source": None,
            "seconds": 25.0,
            "count": 100,
            "unit": "texts",
            "per_second": 4.0,
            "cache_hits": 7,
        }
    ]


def test_each_stage_keeps_its_own_interval():
    clock, out = FakeClock(), io.StringIO()
    with progress.enabled(progress.LINES, every=10.0, stream=out, clock=clock):
        with (
            progress.stage("extract", 4, unit="files", source="a") as a,
            progress.stage("extract", 4, "files", "b") as b,
        ):
            for _ in range(4):
                clock.now += 4
                a.advance()
                b.advance()
    text = out.getvalue()
    # 16 s: one line each at 12 s (the first advance past 10 s), none more before the end
    assert text.count("extract a: 3/4 files") == 1 and text.count("extract b: 3/4 files") == 1
    assert len(text.splitlines()) == 2 + 2 + 2


def test_without_display_stages_are_still_timed_and_a_stage_without_count_has_no_rate():
    with progress.recording() as stages:
        with progress.stage("fetch", source="docs"):
            pass
        with progress.stage("embed", 0, unit="texts") as s:  # everything from the cache
            s.note(cache_hits=12)
    fetch, embed = stages
    assert fetch["stage"] == "fetch" and fetch["source"] == "docs" and fetch["seconds"] >= 0
    assert "per_second" not in fetch and "count" not in fetch
    assert embed["count"] == 0 and embed["per_second"] is None and embed["cache_hits"] == 12
    assert (
        progress.timing_lines(stages)[1].startswith("embed: ")
        and "0 texts, 12 from cache" in progress.timing_lines(stages)[1]
    )


def test_a_stage_outside_a_recording_is_not_kept_and_a_bad_interval_is_named(monkeypatch):
    with progress.stage("index", 3, unit="chunks") as s:
        s.advance(3)
    with progress.recording() as stages:
        pass
    assert stages == []
    monkeypatch.setenv(progress.PROGRESS_EVERY_ENV, "soon")
    with pytest.raises(ValueError, match=progress.PROGRESS_EVERY_ENV):
        progress.progress_every()
