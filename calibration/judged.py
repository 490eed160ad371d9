"""Judged queries (the format of bench/eval/*.jsonl) and their fixed dev/test split.

One JSON object a line: ``{"id", "query", "relevant": {path: grade}, "kind"?}``.  In-domain queries grade files 2
(answers) and 1 (partly answers); a query with no relevant file is off-topic (``kind``: ``off-topic`` or
``near-domain``).  The split is fixed once, by the query id alone (never by its text, its judgments or any
system's result): ``dev`` when the first byte of sha256("trustindex-eval:" + id) is even, else ``test``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from trustindex.schemas.errors import QueryError

SPLITS = ("dev", "test")
IN_DOMAIN = "in-domain"
OFF_TOPIC_KINDS = ("off-topic", "near-domain")


class JudgedFileError(QueryError, ValueError):
    """A judged-query file that cannot be read; the message names the file and line."""


def split_of(query_id: str) -> str:
    return SPLITS[hashlib.sha256(f"trustindex-eval:{query_id}".encode()).digest()[0] % 2]


@dataclass(frozen=True)
class JudgedQuery:
    id: str
    query: str
    relevant: dict[str, int] = field(default_factory=dict)
    kind: str = IN_DOMAIN

    @property
    def split(self) -> str:
        return split_of(self.id)

    @property
    def in_domain(self) -> bool:
        return bool(self.relevant)

    @property
    def group(self) -> str:
        """in-domain (any kind with judged pages: how-to, concept, ...), off-topic or near-domain."""
        return self.kind if self.kind in OFF_TOPIC_KINDS else IN_DOMAIN


def read_jsonl(path: Path) -> list[JudgedQuery]:
    path = Path(path)
    if not path.is_file():
        raise JudgedFileError(f"{path}: judged-query file not found")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            raise JudgedFileError(f"{path}:{n}: not JSON ({e.msg})") from None
        if not (isinstance(q, dict) and q.get("id") and q.get("query") and isinstance(q.get("relevant", {}), dict)):
            raise JudgedFileError(f"{path}:{n}: expected {{'id', 'query', 'relevant': {{path: grade}}}}")
        try:
            relevant = {str(p): int(g) for p, g in q.get("relevant", {}).items()}
        except (TypeError, ValueError):
            raise JudgedFileError(f"{path}:{n}: grades must be integers") from None
        kind = q.get("kind") or (IN_DOMAIN if relevant else OFF_TOPIC_KINDS[0])
        out.append(JudgedQuery(str(q["id"]), q["query"], relevant, kind))
    return out
