"""Vouches made as of an earlier commit: the operator's ledger and signed tags.

Either vouches for a file's content at that commit; the link is stale unless
the file's content now is the same, or only a cosmetic change from it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from trustindex.crawl.git import BlobReadError, Mirror, commit_of, read_blob, read_commit_time, tree_shas
from trustindex.crawl.history import FileHistory
from trustindex.crawl.keyring import KeyringError, operator_keyring, operator_keys_digest
from trustindex.crawl.signature_cache import CheckCount, SignatureCache
from trustindex.crawl.signatures import NOT_VERIFIED, SignatureCheck, SignatureError, annotated_tags
from trustindex.extractors.freshness import is_cosmetic_change
from trustindex.extractors.globs import matches
from trustindex.extractors.verification import Attestation, Link, make_link
from trustindex.ingest.context import MAX_TOUCHES
from trustindex.schemas.config import Identities, LedgerEntry, Source
from trustindex.schemas.tables import AUTHENTICATED, OPERATOR

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
                link = make_link(
                    ids, entry.verifier, entry.verifier, "ledger", sha, when, stale, detail, evidence_class=OPERATOR
                )
                out.setdefault(path, []).append(link)
    return out


@dataclass
class SignatureEvidence:
    checks: dict[str, SignatureCheck] = field(default_factory=dict)  # per commit SHA
    tag_links: dict[str, list[Link]] = field(default_factory=dict)  # per path: good signed tags' vouches
    attestations: dict[str, Attestation] = field(default_factory=dict)  # per commit SHA: a platform's mark
    count: CheckCount = field(default_factory=CheckCount)  # signatures git checked now, and answered by the cache


def signature_evidence(
    repo: Mirror,
    signers_dir: Path,
    cache_file: Path,
    source: Source,
    ids: Identities,
    history: dict[str, FileHistory],
    owners: dict[str, object],
    blobs: dict[str, bytes],
) -> SignatureEvidence:
    """Signatures git verifies against the operator's keys: each commit's check (the files' touches and the
    pull-request merges that brought them), per file the links of good signed tags (vouches like a ledger
    entry), and the platforms' marks on commits.  Nothing when nobody lists a key."""
    touches = [c for p in blobs if p in history for c in history[p].touches[:MAX_TOUCHES]]
    commits = {c.sha: c for c in touches} | {m.sha: m for c in touches if (m := owners.get(c.sha)) is not None}
    try:
        digest = operator_keys_digest(ids, signers_dir)
        if digest is None:
            return SignatureEvidence()
        cache = SignatureCache(cache_file, digest)
        checks, tag_checks = cache.verify(
            repo, sorted(commits), annotated_tags(repo), lambda: operator_keyring(ids, signers_dir)
        )
        cache.save()
    except (SignatureError, KeyringError, OSError) as e:
        log.warning("source %s: signatures not checked: %s", source.name, e)
        return SignatureEvidence()
    # A platform's key attests the merges it performed, not releases: its signed tags vouch for nothing.
    tags = [t for t in tag_checks if t.status == "good" and ids.platform_by_email(t.principal) is None]
    out = SignatureEvidence(checks, {}, attestations(commits.values(), checks, ids), cache.count)
    for t in tags:
        try:
            tree = tree_shas(repo, t.commit)
        except Exception:
            continue
        for path, data in blobs.items():
            stale = changed_since(repo, tree, path, data)
            out.tag_links.setdefault(path, []).append(
                make_link(
                    ids,
                    t.principal,
                    t.principal,
                    "signature",
                    t.commit,
                    t.date,
                    stale,
                    f"signed tag {t.tag}",
                    evidence_class=AUTHENTICATED,
                )
            )
    return out


def attestations(commits, checks: dict[str, SignatureCheck], ids: Identities) -> dict[str, Attestation]:
    """Per commit: the platform whose listed key signed it, or the platform its committer field names (unsigned:
    a claim, with what git said about its signature)."""
    out: dict[str, Attestation] = {}
    for c in commits:
        check = checks.get(c.sha)
        signer = ids.platform_by_email(check.principal) if check and check.status == "good" else None
        if signer is not None:
            out[c.sha] = Attestation(signer.name, signer.attests, True)
            continue
        named = ids.platform_by_email(c.committer_email)
        if named is None:
            continue
        if check is None or check.status == "none":
            reason = "no signature"
        elif check.status == "good":
            reason = "signed by a key that is not the platform's"
        else:
            reason = NOT_VERIFIED.get(check.status, NOT_VERIFIED["error"])
        out[c.sha] = Attestation(named.name, named.attests, False, reason)
    return out
