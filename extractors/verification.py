"""Verification chains: who vouched for a document's current content.

Links come from commit trailers (Reviewed-by, Acked-by, Tested-by,
Approved-by), from the pull-request merge that brought a change in (the person
who merged it, as GitHub records "Merge pull request #N"), from signatures git
verified, and from the operator's ledger.  Each link maps an e-mail address
through identities.toml to a person, publisher and tier; an address the
operator does not list is kept in the chain with tier ``unknown`` and carries
no authority (a forged trailer naming a known person's *name* with another
address stays unknown).  A link is stale when the file changed substantively
after the verified commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from trustindex.schemas.config import Identities
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED

TRAILER = re.compile(
    r"^(Reviewed-by|Acked-by|Tested-by|Approved-by):[ \t]*(.*?)[ \t]*<([^<>\s]+)>[ \t]*$", re.MULTILINE | re.IGNORECASE
)
MERGE_PR = re.compile(r"\AMerge pull request #(\d+) from (\S+)")
SQUASH_PR = re.compile(r"\A[^\n]*\(#(\d+)\)[ \t]*(?:\n|\Z)")  # GitHub's squash-merge subject: "Title (#N)"


@dataclass(frozen=True)
class Attestation:
    """What a platform's identity on a commit is worth: ``signed`` when git verified the platform's listed key
    on it (then the author the platform recorded is authenticated), else only the committer field claims it."""

    platform: str
    attests: tuple[str, ...]  # schemas.config.PLATFORM_ATTESTS it vouches for
    signed: bool
    reason: str = ""  # unsigned: what git said about the signature


@dataclass
class Link:
    verifier: str
    verifier_email: str
    publisher: str
    tier: str
    method: str  # trailer | merge | signature | ledger
    commit: str
    date: datetime
    stale: bool
    detail: str
    evidence_class: str  # schemas.tables.EVIDENCE_CLASSES: what the link rests on


def trailer_block(message: str) -> str:
    """Git trailers live in the message's last paragraph."""
    paras = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    return paras[-1] if len(paras) > 1 else ""


def parse_trailers(message: str) -> list[tuple[str, str, str]]:
    return [(m.group(1).title(), m.group(2), m.group(3)) for m in TRAILER.finditer(trailer_block(message))]


def make_link(
    ids: Identities,
    name: str,
    email: str,
    method: str,
    commit: str,
    date: datetime,
    stale: bool,
    detail: str,
    *,
    evidence_class: str,
) -> Link:
    person = ids.person_by_email(email)
    if person is None:
        return Link(
            name,
            email,
            "",
            "unknown",
            method,
            commit,
            date,
            stale,
            f"{detail}; identity not in identities.toml: no authority",
            evidence_class,
        )
    tier = ids.tier_of(person.publisher)
    return Link(person.name, email, person.publisher, tier, method, commit, date, stale, detail, evidence_class)


def merge_owners(commits) -> dict[str, object]:
    """Map each commit brought in by a pull-request merge to that merge commit.

    Walks from each merge's second parent until the first-parent mainline (or
    a commit already claimed), newest merge first; one pass over the graph.
    """
    by_sha = {c.sha: c for c in commits}
    if not commits:
        return {}
    mainline, c = set(), commits[0]
    while c is not None:
        mainline.add(c.sha)
        c = by_sha.get(c.parents[0]) if c.parents else None
    owner: dict[str, object] = {}
    for m in commits:
        if not (m.is_merge and m.sha in mainline and MERGE_PR.match(m.message)):
            continue
        stack = list(m.parents[1:])
        while stack:
            sha = stack.pop()
            if sha in mainline or sha in owner or sha not in by_sha:
                continue
            owner[sha] = m
            stack.extend(by_sha[sha].parents)
    return owner


def _platform_link(
    ids: Identities, m, kind: str, pr: str, stale: bool, attestations: dict[str, Attestation]
) -> Link | None:
    """The merger link of a pull-request merge (``kind`` merge) or squash commit: authenticated when the
    platform's listed key signed it, claimed otherwise; None for a squash no platform is named on."""
    a = attestations.get(m.sha)
    verb = "merged" if kind == "merge" else "squash-merged"
    if a is not None and a.signed and kind in a.attests:
        detail, cls = f"{verb} pull request #{pr}; signed by platform {a.platform}'s listed key", AUTHENTICATED
    elif a is not None:
        why = "signed for another purpose" if a.signed else a.reason
        detail, cls = f"{verb} pull request #{pr}; committer claims platform {a.platform}, {why}: claimed", CLAIMED
    elif kind == "merge":
        detail, cls = f"merged pull request #{pr} (unsigned merge commit)", CLAIMED
    else:
        return None
    return make_link(
        ids, m.author_name, m.author_email, "merge", m.sha, m.commit_date, stale, detail, evidence_class=cls
    )


def chain_for_file(
    touches, substantive: dict[str, bool], owners: dict, ids: Identities, attestations: dict[str, Attestation]
) -> list[Link]:
    """Trailer and merge links over the commits that touched one file (newest first).

    ``attestations``: per commit SHA, the platform signature (or claim) on it; a pull-request merge or squash
    commit the platform signed makes an authenticated merger link.
    """
    links: list[Link] = []
    seen_merges: set[str] = set()
    for i, c in enumerate(touches):
        newer_substantive = [t for t in touches[:i] if substantive.get(t.sha)]
        for kind, name, email in parse_trailers(c.message):
            links.append(
                make_link(
                    ids,
                    name,
                    email,
                    "trailer",
                    c.sha,
                    c.commit_date,
                    bool(newer_substantive),
                    f"{kind} on {c.sha[:12]} (unsigned trailer)",
                    evidence_class=CLAIMED,
                )
            )
        squash = SQUASH_PR.match(c.message) if not c.is_merge else None
        if squash:
            link = _platform_link(ids, c, "squash", squash.group(1), bool(newer_substantive), attestations)
            if link is not None:
                links.append(link)
        m = owners.get(c.sha)
        if m is not None and m.sha not in seen_merges:
            seen_merges.add(m.sha)
            covered = {sha for sha, o in owners.items() if o is m}
            stale = any(t.sha not in covered and t.commit_date > m.commit_date for t in newer_substantive)
            pr = MERGE_PR.match(m.message)
            link = _platform_link(ids, m, "merge", pr.group(1), stale, attestations)
            if link is not None:
                links.append(link)
    return links
