"""Vouches made as of an earlier commit: the operator's ledger and signed tags.

Either vouches for a file's content at that commit; the link is stale unless
the file's content now is the same, or only a cosmetic change from it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from trustindex.crawl.git import BlobReadError, Mirror, commit_of, read_blob, read_commit_time, tree_shas
from trustindex.crawl.history import FileHistory
from trustindex.crawl.signatures import (
    SignatureCheck,
    SignatureError,
    allowed_signers_file,
    commit_signatures,
    tag_signatures,
)
from trustindex.extractors.freshness import is_cosmetic_change
from trustindex.extractors.globs import matches
from trustindex.extractors.verification import Link, make_link
from trustindex.ingest.context import MAX_TOUCHES
from trustindex.schemas.config import Identities, LedgerEntry, Source

log = logging.getLogger(__name__)


def changed_since(repo: Mirror, tree_then: dict[str, str], path: str, data: bytes) -> bool:
    """Whether ``data`` (the file now) is a substantive change from the file in ``tree_then`` (absent then: yes)."""
    try:
        then = read_blob(repo, tree_then[path]) if path in tree_then else None
    except BlobReadError:
        return True  # the file as vouched for cannot be compared: the vouch counts as stale
    return then is None or not (then == data or is_cosmetic_change(then, data))


def ledger_links(
    repo: Mirror, source: Source, ledger: list[LedgerEntry], ids: Identities, blobs: dict[str, bytes]
) -> dict[str, list[Link]]:
    """The operator's ledger: a verifier vouched for matching paths as of a commit or tag."""
    out: dict[str, list[Link]] = {}
    for entry in ledger:
        if entry.source != source.name:
            continue
        try:
            sha = commit_of(repo, entry.commit)
            seconds = read_commit_time(repo, sha) if sha else None
            if sha is None or seconds is None:
                continue  # a ledger commit this source does not have (or cannot date) vouches for nothing
            when = datetime.fromtimestamp(seconds, UTC)
            tree = tree_shas(repo, sha)
        except Exception:
            continue
        detail = f"operator ledger ({entry.method}){': ' + entry.note if entry.note else ''}"
        for path, data in blobs.items():
            if matches(path, entry.path):
                stale = changed_since(repo, tree, path, data)
                link = make_link(ids, entry.verifier, entry.verifier, "ledger", sha, when, stale, detail)
                out.setdefault(path, []).append(link)
    return out


def signature_evidence(
    repo: Mirror,
    signers_dir: Path,
    source: Source,
    ids: Identities,
    history: dict[str, FileHistory],
    blobs: dict[str, bytes],
) -> tuple[dict[str, SignatureCheck], dict[str, list[Link]]]:
    """Signatures git verifies against the operator's signers: each commit's check, and per file the links of
    good signed tags (vouches like a ledger entry).  Nothing when no person lists a signing key."""
    allowed = allowed_signers_file(ids, signers_dir)
    if allowed is None:
        return {}, {}
    shas = sorted({c.sha for p in blobs if p in history for c in history[p].touches[:MAX_TOUCHES]})
    try:
        checks = commit_signatures(repo, shas, allowed) if shas else {}
        tags = [t for t in tag_signatures(repo, allowed) if t.status == "good"]
    except SignatureError as e:
        log.warning("source %s: signatures not checked: %s", source.name, e)
        return {}, {}
    links: dict[str, list[Link]] = {}
    for t in tags:
        try:
            tree = tree_shas(repo, t.commit)
        except Exception:
            continue
        for path, data in blobs.items():
            stale = changed_since(repo, tree, path, data)
            links.setdefault(path, []).append(
                make_link(ids, t.principal, t.principal, "signature", t.commit, t.date, stale, f"signed tag {t.tag}")
            )
    return checks, links
