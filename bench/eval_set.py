"""The judged evaluation set of issue 16: in-domain queries with graded files, off-topic queries, a dev/test split.

Files (``bench/eval/``, how they were judged: ``bench/eval/README.md``):

- ``midnight_docs_queries.jsonl`` and ``judged_*.jsonl``: in-domain queries, ``{"id", "query", "relevant":
  {path: grade}, "kind"?}`` with grades 2 (answers) and 1 (partly answers);
- ``off_topic.jsonl``: queries the docs do not answer, ``{"id", "query", "kind": "off-topic" | "near-domain",
  "relevant": {}}``.

The split is fixed once, by the query id alone (never by its text, its judgments or any system's result): a
query is ``dev`` when the first byte of sha256("trustindex-eval:" + id) is even, else ``test``.  Tune on dev,
report test.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

EVAL_DIR = Path(__file__).resolve().parent / "eval"
IN_DOMAIN_FILES = ("midnight_docs_queries.jsonl", "judged_*.jsonl")
OFF_TOPIC_FILE = "off_topic.jsonl"
SPLITS = ("dev", "test")
OFF_TOPIC_KINDS = ("off-topic", "near-domain")


def split_of(query_id: str) -> str:
    return SPLITS[hashlib.sha256(f"trustindex-eval:{query_id}".encode()).digest()[0] % 2]


@dataclass(frozen=True)
class JudgedQuery:
    id: str
    query: str
    relevant: dict[str, int] = field(default_factory=dict)
    kind: str = "in-domain"

    @property
    def split(self) -> str:
        return split_of(self.id)

    @property
    def in_domain(self) -> bool:
        return bool(self.relevant)


def read_jsonl(path: Path) -> list[JudgedQuery]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n}: not JSON ({e.msg})") from None
        if not (isinstance(q, dict) and q.get("id") and q.get("query") and isinstance(q.get("relevant", {}), dict)):
            raise ValueError(f"{path}:{n}: expected {{'id', 'query', 'relevant': {{path: grade}}}}")
        kind = q.get("kind") or ("in-domain" if q.get("relevant") else "off-topic")
        out.append(JudgedQuery(str(q["id"]), q["query"], {p: int(g) for p, g in q.get("relevant", {}).items()}, kind))
    return out


def load(eval_dir: Path = EVAL_DIR, split: str | None = None) -> list[JudgedQuery]:
    """Every judged query (in-domain first, then off-topic), optionally one split; ids are unique."""
    files = [eval_dir / IN_DOMAIN_FILES[0], *sorted(eval_dir.glob(IN_DOMAIN_FILES[1])), eval_dir / OFF_TOPIC_FILE]
    queries = [q for f in files if f.is_file() for q in read_jsonl(f)]
    seen: set[str] = set()
    for q in queries:
        if q.id in seen:
            raise ValueError(f"{eval_dir}: query id {q.id!r} appears twice")
        seen.add(q.id)
    return [q for q in queries if split is None or q.split == split]
