"""The judged evaluation set of issue 16: in-domain queries with graded files, off-topic queries, a dev/test split.

Files (``bench/eval/``, how they were judged: ``bench/eval/README.md``):

- ``midnight_docs_queries.jsonl`` and ``judged_*.jsonl``: in-domain queries, ``{"id", "query", "relevant":
  {path: grade}, "kind"?}`` with grades 2 (answers) and 1 (partly answers);
- ``off_topic.jsonl`` and ``off_topic_*.jsonl``: queries the docs do not answer, ``{"id", "query", "kind":
  "off-topic" | "near-domain", "relevant": {}}``.

The split is fixed once, by the query id alone (never by its text, its judgments or any system's result): a
query is ``dev`` when the first byte of sha256("trustindex-eval:" + id) is even, else ``test``.  Tune on dev,
report test.  The file format and the split rule live in the package (calibration/judged.py), so that
``trustindex calibrate --split`` splits exactly as the benches do.
"""

from __future__ import annotations

from pathlib import Path

from trustindex.calibration.judged import OFF_TOPIC_KINDS, SPLITS, JudgedQuery, read_jsonl, split_of

EVAL_DIR = Path(__file__).resolve().parent / "eval"
IN_DOMAIN_FILES = ("midnight_docs_queries.jsonl", "judged_*.jsonl")
OFF_TOPIC_FILES = ("off_topic.jsonl", "off_topic_*.jsonl")
__all__ = ["EVAL_DIR", "OFF_TOPIC_KINDS", "SPLITS", "JudgedQuery", "load", "read_jsonl", "split_of"]


def load(eval_dir: Path = EVAL_DIR, split: str | None = None) -> list[JudgedQuery]:
    """Every judged query (in-domain first, then off-topic), optionally one split; ids are unique."""
    files = [eval_dir / IN_DOMAIN_FILES[0], *sorted(eval_dir.glob(IN_DOMAIN_FILES[1]))]
    files += [eval_dir / OFF_TOPIC_FILES[0], *sorted(eval_dir.glob(OFF_TOPIC_FILES[1]))]
    queries = [q for f in files if f.is_file() for q in read_jsonl(f)]
    seen: set[str] = set()
    for q in queries:
        if q.id in seen:
            raise ValueError(f"{eval_dir}: query id {q.id!r} appears twice")
        seen.add(q.id)
    return [q for q in queries if split is None or q.split == split]
