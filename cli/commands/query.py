"""``trustindex query``: one question (or a batch of them) asked of the live snapshot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from trustindex.schemas.errors import TrustIndexError

ABOUT = "ask the live snapshot"
EXAMPLES = (
    'trustindex query "How do I install the Compact compiler?" --data data --explain',
    'trustindex query "counter contract" --target compact-language=0.23 --strict --json',
    "trustindex query --batch queries.jsonl --data data",
)
OPTIONS = ("data", "snapshot", "policy", "json")


def arguments(q) -> None:
    q.add_argument("text", nargs="?", help="the question")
    q.add_argument(
        "--batch", metavar="FILE", help='JSON Lines of {"query": ...} objects; prints one JSON line per query'
    )
    q.add_argument("--k", type=int, default=5, help="how many passages to return (default: 5)")
    q.add_argument(
        "--target",
        action="append",
        metavar="COMPONENT=VERSION_OR_RANGE",
        help="the version the answer must fit (repeatable)",
    )
    q.add_argument("--also", action="append", metavar="TEXT", help="another phrasing of the same question")
    q.add_argument(
        "--strict",
        action="store_true",
        help="keep only passages that satisfy every --target (default: drop breaking ones, rank near misses lower)",
    )
    q.add_argument("--explain", action="store_true", help="show each passage's trust factors")


def open_index(a, policy):
    """The snapshot ``--snapshot`` names, else the live one, under ``policy`` (a file's path or a Policy)."""
    from trustindex.query.index import Index

    if a.snapshot:
        return Index.open(a.snapshot, data_dir=a.data, policy=policy)
    return Index.open(data_dir=a.data, policy=policy)


def run(a) -> int:
    from trustindex.cli.common import print_json
    from trustindex.query.render import render_table

    index = open_index(a, a.policy)
    if a.batch:
        return _batch(index.warm(), a)  # many queries: the int8 prefilter pays for itself
    if a.text is None:
        raise TrustIndexError("query: give the query TEXT or --batch FILE")
    r = index.search(a.text, k=a.k, targets=a.target or None, strict=a.strict, also=a.also or None)
    if a.json:
        print_json(r)
    else:
        print(render_table(r, explain=a.explain))
    return 0


def _batch(index, a) -> int:
    """One response or error object a line, in order; the exit status is the number of failed lines (at most 125)."""
    from trustindex.query.batch import BatchDefaults, batch_lines

    path = Path(a.batch)
    if not path.is_file():
        raise TrustIndexError(f"{path}: batch file not found")
    failed = 0
    defaults = BatchDefaults(k=a.k, targets=a.target or None, strict=a.strict)
    for r, bad in batch_lines(index, path.read_text(encoding="utf-8"), defaults):
        failed += bad
        sys.stdout.write(json.dumps(r, separators=(",", ":"), default=str) + "\n")
    if failed:
        print(f"{path}: {failed} request(s) failed (error objects in their place)", file=sys.stderr)
    return min(failed, 125)
