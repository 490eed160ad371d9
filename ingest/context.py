"""What extracting one source at one commit reads, built once and handed to every file.

The tree walk, the history pass, the manifests and the operator's evidence are
per source; each file's rows are a function of this context and the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from trustindex.crawl.git import Mirror, read_blob
from trustindex.crawl.history import CommitInfo, FileHistory
from trustindex.crawl.signatures import SignatureCheck
from trustindex.extractors.base import FileContext
from trustindex.extractors.freshness import is_cosmetic_change
from trustindex.extractors.sphinx_conf import NO_SPHINX, SphinxSources
from trustindex.extractors.verification import Attestation, Link
from trustindex.ingest.evidence import SourceEvidence
from trustindex.ingest.incremental import Plan
from trustindex.schemas.config import Identities, Source
from trustindex.schemas.policy import Policy

MAX_TOUCHES = 50  # older touches are treated as substantive: conservative, bounded work


@dataclass
class SourceContext:
    source: Source
    commit: str
    repo: Mirror  # the source's mirror, fetched once this run
    ids: Identities
    policy: Policy
    count_tokens: Callable[[str], int]
    head_time: datetime  # the commit's time: the freshness of a file with no history
    history: dict[str, FileHistory]  # per path, the commits that touched it (newest first)
    owners: dict[str, object]  # commit SHA -> the pull-request merge commit that brought it in (merge_owners)
    bulk: int  # a commit changing more files than this is a bulk change, not a substantive one
    evidence: SourceEvidence  # manifests and docs versions: what the whole tree says about each file
    plan: Plan  # which paths' rows are carried forward from the previous commit
    sphinx: SphinxSources = NO_SPHINX  # the Sphinx projects' own page suffixes (extractors/sphinx_conf.py)
    failed_configs: set[str] = field(default_factory=set)  # manifests that failed: no document rows
    vouches: dict[str, list[Link]] = field(default_factory=dict)  # per path: ledger entries and signed tags
    signatures: dict[str, SignatureCheck] = field(default_factory=dict)  # per commit SHA
    attestations: dict[str, Attestation] = field(default_factory=dict)  # per commit SHA: a platform's mark on it
    _substantive: dict[tuple[str, str], bool] = field(default_factory=dict)

    def file_context(self, path: str) -> FileContext:
        ing = self.policy.ingest
        return FileContext(
            source=self.source.name,
            path=path,
            commit=self.commit,
            count_tokens=self.count_tokens,
            max_tokens=ing.max_tokens,
            target_tokens=ing.target_tokens,
        )

    def touches(self, path: str) -> list[CommitInfo]:
        """The newest commits that touched the file, newest first (at most MAX_TOUCHES)."""
        h = self.history.get(path)
        return h.touches[:MAX_TOUCHES] if h else []

    def created(self, path: str) -> datetime:
        """The date of the first commit that touched the file (the commit's own time when it has no history)."""
        h = self.history.get(path)
        return h.touches[-1].commit_date if h and h.touches else self.head_time

    def is_substantive(self, c: CommitInfo, path: str) -> bool:
        return is_substantive(self.repo, c, path, self.bulk, self._substantive)


def is_substantive(repo: Mirror, c: CommitInfo, path: str, bulk: int, cache: dict[tuple[str, str], bool]) -> bool:
    """Whether the commit changed the file's substance (not whitespace or formatting alone, not as a bulk edit)."""
    key = (c.sha, path)
    if key not in cache:
        old, new = c.changes.get(path, (None, None))
        if old is None:
            cache[key] = True  # the file's creation is substantive, even inside an initial import
        elif len(c.changes) > bulk:
            cache[key] = False
        else:
            try:
                cache[key] = not is_cosmetic_change(
                    read_blob(repo, old) if old else None, read_blob(repo, new) if new else None
                )
            except Exception:
                cache[key] = True
    return cache[key]
