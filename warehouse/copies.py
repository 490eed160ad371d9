"""Copies across sources (issue 43): a passage whose normalised text nearly equals a passage of another source.

A repository that carries a copy of another's guide competes with the original for every question the guide
answers, and may outrank it (fresher, or on a page whose other passages read better).  At build, over every
source's passages at once:

- a passage's text is normalised to its lower-case words (markup, punctuation and spacing dropped) and read as the
  set of its 3-word shingles; a passage of fewer than MIN_WORDS words is never called a copy (a heading and a
  one-line command are shared by design);
- candidate pairs come from MinHash LSH (datasketch) at the threshold, one MinHash per distinct normalised text,
  and a pair counts when the exact Jaccard similarity of the two shingle sets is at least JACCARD (identical
  normalised texts: 1.0) and the two passages are of different sources;
- each group of such passages (connected pairs) has one original: the passage of the highest attribution tier,
  then of the document first committed earliest (``documents.created``), then by source, path and ordinal; every
  passage of the group in another source whose own similarity to the original reaches JACCARD is its copy.

The result is the ``copies`` table (one row per copy: its chunk id, the original's, the similarity and the method),
written only when there is a copy: a search folds a copy into its original's hit (query/copies.py).  Passages of
one source are never compared with each other here (identical passages there are collapsed at query time, and a
docs site's older versions are its own).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from trustindex.runtime import progress
from trustindex.schemas.policy_sections import TIERS
from trustindex.schemas.tables import table_from_rows

COPY_DETECTION = "1"  # bump when what counts as a copy changes: it is part of the build's inputs
JACCARD = 0.8
SHINGLE_WORDS = 3
MIN_WORDS = 30
NUM_PERM = 64  # enough for candidates at 0.8: every candidate pair is checked exactly
IDENTICAL, NEAR_DUPLICATE = "identical_normalised_text", "minhash_jaccard"
_WORD = re.compile(r"\w+", re.UNICODE)


def normalised_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(words: Sequence[str]) -> set[bytes]:
    n = SHINGLE_WORDS
    return {" ".join(words[i : i + n]).encode("utf-8") for i in range(max(1, len(words) - n + 1))}


def jaccard(a: set[bytes], b: set[bytes]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


class _Groups:
    """Union-find over distinct normalised texts."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def find_copies(chunks: pa.Table, documents: pa.Table, attribution: pa.Table) -> pa.Table:
    """The ``copies`` table of a snapshot's passages (empty with fewer than two sources)."""
    sources = chunks.column("source").to_pylist()
    if len(set(sources)) < 2:
        return table_from_rows("copies", [])
    texts = chunks.column("text").to_pylist()
    keys: dict[str, int] = {}  # normalised text digest -> distinct text number
    words_of: list[list[str]] = []
    text_of = []  # per passage: its distinct text number, -1 when too short
    for t in texts:
        words = normalised_words(t or "")
        if len(words) < MIN_WORDS:
            text_of.append(-1)
            continue
        digest = hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()
        if digest not in keys:
            keys[digest] = len(words_of)
            words_of.append(words)
        text_of.append(keys[digest])
    by_text: dict[int, list[int]] = {}
    for row, k in enumerate(text_of):
        if k >= 0:
            by_text.setdefault(k, []).append(row)
    sets = [shingles(w) for w in words_of]
    held_by = [{sources[r] for r in by_text[k]} for k in range(len(sets))]  # the sources holding each text
    groups = _Groups(len(sets))
    for a, b in _candidate_pairs(sets):
        if len(held_by[a] | held_by[b]) > 1 and jaccard(sets[a], sets[b]) >= JACCARD:
            groups.union(a, b)
    rank = _original_rank(chunks, documents, attribution)
    members: dict[int, list[int]] = {}
    for k in range(len(sets)):
        members.setdefault(groups.find(k), []).extend(by_text[k])
    rows = []
    ids = chunks.column("chunk_id").to_pylist()
    for group in members.values():
        if len({sources[r] for r in group}) < 2:
            continue
        original = min(group, key=rank)
        for r in sorted(group):
            if sources[r] == sources[original]:
                continue
            same = text_of[r] == text_of[original]
            sim = 1.0 if same else jaccard(sets[text_of[r]], sets[text_of[original]])
            if sim >= JACCARD:
                method = IDENTICAL if same else NEAR_DUPLICATE
                rows.append({"chunk_id": ids[r], "copy_of": ids[original], "similarity": sim, "method": method})
    rows.sort(key=lambda x: x["chunk_id"])
    return table_from_rows("copies", rows)


def _candidate_pairs(sets: list[set[bytes]]) -> list[tuple[int, int]]:
    """Pairs of distinct texts that MinHash LSH puts in one bucket at the threshold (checked exactly after)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=JACCARD, num_perm=NUM_PERM)
    pairs: set[tuple[int, int]] = set()
    with progress.stage("copies", len(sets), unit="texts") as bar:
        for k, m in enumerate(MinHash.bulk(sets, num_perm=NUM_PERM)):
            for other in lsh.query(m):
                pairs.add((other, k))
            lsh.insert(k, m, check_duplication=False)
            bar.advance()
    return sorted(pairs)


def _original_rank(chunks: pa.Table, documents: pa.Table, attribution: pa.Table):
    """The sort key that puts a group's original first: attribution tier, first commit, source, path, ordinal."""
    doc_ids = documents.column("doc_id")
    created = documents.column("created").to_pylist() if "created" in documents.column_names else None
    tier_of = dict(zip(attribution.column("doc_id").to_pylist(), attribution.column("tier").to_pylist(), strict=True))
    at = pc.index_in(chunks.column("doc_id"), value_set=doc_ids.combine_chunks()).to_pylist()
    docs = doc_ids.to_pylist()
    sources, paths = chunks.column("source").to_pylist(), chunks.column("path").to_pylist()
    ordinals = chunks.column("ordinal").to_pylist()

    def key(r: int) -> tuple:
        d = at[r]
        tier = tier_of.get(docs[d]) if d is not None else None
        first = created[d] if created is not None and d is not None else None
        tier_rank = TIERS.index(tier) if tier in TIERS else len(TIERS)
        return (tier_rank, first is None, first or 0, sources[r], paths[r], ordinals[r])

    return key
