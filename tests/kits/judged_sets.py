"""Checks every judged-query set shares (bench/eval/ and its corpora's folders, the format of calibration/judged.py)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from trustindex.calibration.judged import OFF_TOPIC_KINDS, JudgedQuery


def assert_unique(queries: list[JudgedQuery]) -> None:
    """No id twice, and no query text twice (case and spacing aside)."""
    assert [i for i, n in Counter(q.id for q in queries).items() if n > 1] == []
    texts = Counter(re.sub(r"\s+", " ", q.query.strip().lower()) for q in queries)
    assert [t for t, n in texts.items() if n > 1] == []


def assert_graded(queries: list[JudgedQuery], kinds: Iterable[str], path_ok: Callable[[str], bool]) -> None:
    """An in-domain query (one of ``kinds``) grades files 1 or 2, at least one 2, each path as ``path_ok`` wants;
    an off-topic or near-domain one grades none."""
    kinds = set(kinds)
    for q in queries:
        if q.kind in OFF_TOPIC_KINDS:
            assert q.relevant == {}, q.id
            continue
        assert q.kind in kinds, (q.id, q.kind)
        assert set(q.relevant.values()) <= {1, 2} and 2 in q.relevant.values(), q.id
        assert all(path_ok(p) for p in q.relevant), q.id


def assert_jsonl_files(folder: Path, names: list[str], id_prefix: str) -> None:
    """``folder`` holds exactly the files ``names`` (sorted), each line one JSON object with the format's keys and an
    id starting with ``id_prefix``."""
    files = sorted(folder.glob("*.jsonl"))
    assert [f.name for f in files] == names
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            obj = json.loads(line)
            assert set(obj) == {"id", "query", "kind", "relevant"}, f"{f.name}:{n}"
            assert obj["id"].startswith(id_prefix), f"{f.name}:{n}"
