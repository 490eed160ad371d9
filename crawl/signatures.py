"""Signatures on commits and tags, checked by git itself against the operator's keys.

DESIGN: "signatures on commits and tags checked by git itself against signers
the operator lists".  The signers are the keys of persons and platforms in
identities.toml (crawl/keyring.py): SSH keys written into an allowed-signers
file (ssh-keygen(1), "ALLOWED SIGNERS"), OpenPGP keys imported into a private
GnuPG home.  Nothing inside a crawled repository can add one.  Git verifies SSH
signatures with ``ssh-keygen -Y find-principals`` / ``-Y verify`` against that
file, so the principal it reports is a line the operator wrote; an OpenPGP
signature's signer is the owner of the key fingerprint git reports, never the
key's own user id.

What can run: every command passes ``-c`` settings for all of git's signature
programs (``gpg.program``, ``gpg.openpgp.program``, ``gpg.x509.program``,
``gpg.ssh.program``) plus the allowed-signers and revocation files.  Command-
line configuration wins over the repository's own (git-config(1) "FILES":
``-c`` is read last), and SAFE_ENV disables system/global configuration, so a
repository config cannot choose a program.  X.509 signatures go to ``false``
(never good), and so do OpenPGP ones when the operator lists no OpenPGP key.

Tags: git 2.39 has no ``%(signature)`` atom for tags, so each annotated tag is
checked with its own ``git verify-tag`` process; the count is bounded to the
MAX_TAGS newest (by tagger date).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from trustindex.crawl.git import SAFE_ENV, SAFE_OPTS
from trustindex.crawl.keyring import Keyring, KeyringError, allowed_signers_file
from trustindex.extractors.verification import Link, make_link
from trustindex.schemas.config import Identities
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED

__all__ = ["Keyring", "SignatureCheck", "SignatureError", "allowed_signers_file", "commit_signatures"]

log = logging.getLogger(__name__)

CHUNK = 500  # shas per ``git log`` process: keeps the command line far below ARG_MAX
MIN_PARALLEL_CHUNK = 64  # fewer shas than this per process are not worth another process
MAX_WORKERS = 8
MAX_TAGS = 200  # newest annotated tags checked, one ``git verify-tag`` each
TIMEOUT_S = 300
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# git's %G? letters (git-log(1) "PRETTY FORMATS").
_STATUS = {
    "G": "good",
    "U": "unknown_key",
    "B": "bad",
    "N": "none",
    "E": "error",
    "X": "expired",
    "Y": "expired",
    "R": "revoked",
}
# ssh-keygen -Y verify's success line, as git prints it for verify-tag.
_GOOD_FOR = re.compile(r'^Good "git" signature for (\S+) with \S+ key (SHA256:[A-Za-z0-9+/=]+)$', re.MULTILINE)
_GOOD_ANON = re.compile(r'^Good "git" signature with \S+ key (SHA256:[A-Za-z0-9+/=]+)$', re.MULTILINE)


class SignatureError(TrustIndexError):
    """Signatures cannot be checked at all (no ssh-keygen, git failed)."""


@dataclass(frozen=True)
class SignatureCheck:
    status: str  # good | unknown_key | bad | none | error | expired | revoked
    principal: str  # the allowed-signers e-mail that matched ("" unless good)
    fingerprint: str  # SHA256:... of the signing key, when git could read one


@dataclass(frozen=True)
class TagSignature:
    tag: str
    commit: str  # the commit the tag (through nested tags) points at
    principal: str
    date: datetime  # tagger date
    status: str
    fingerprint: str = ""


def _run(repo, args: list[str], keyring: Keyring | None, check: bool = True) -> subprocess.CompletedProcess:
    """git with the keyring's signature settings (None: a command that verifies nothing)."""
    try:
        opts = keyring.git_opts() if keyring is not None else []
    except KeyringError as e:
        raise SignatureError(str(e)) from None
    cmd = ["git", f"--git-dir={repo.git_dir}", *SAFE_OPTS, *opts, *args]
    env = {**os.environ, **SAFE_ENV, **(keyring.env() if keyring is not None else {})}
    for var in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
    ):
        env.pop(var, None)  # the repository is the one given, nothing inherited
    try:
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SignatureError(f"{repo.git_dir}: git {args[0]} took over {TIMEOUT_S} s") from None
    if check and proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise SignatureError(f"{repo.git_dir}: git {args[0]} failed: {detail[0][:300]}")
    return proc


def commit_signatures(repo, shas: list[str], keyring: Keyring) -> dict[str, SignatureCheck]:
    """Each commit's signature status, from ``git log --no-walk`` (one process per CHUNK shas).

    Status ``good`` is git's ``G`` only: a valid signature by a listed key, and
    ``principal`` is the address the operator gave that key's owner (an SSH
    allowed-signers line; for OpenPGP, the owner of the fingerprint), which may
    differ from the commit's author.  An OpenPGP signature by a key that is not
    in the keyring is ``unknown_key`` with the key id git read.  Shas that are not
    full hex object names raise; unknown ones make git fail the chunk.
    """
    wanted = list(dict.fromkeys(s.strip().lower() for s in shas))
    for s in wanted:
        if not _HEX.match(s):
            raise SignatureError(f"not a full commit sha: {s[:80]!r}")
    nonce = secrets.token_hex(8)
    rec, fld = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + fld.join(("%H", "%G?", "%GS", "%GF", "%GP", "%GK"))
    # git runs one gpg or ssh-keygen per signature: the chunks' git processes run side by side, one per core.
    workers = max(1, min(os.cpu_count() or 1, MAX_WORKERS))
    size = min(CHUNK, max(MIN_PARALLEL_CHUNK, -(-len(wanted) // workers)))
    chunks = [wanted[i : i + size] for i in range(0, len(wanted), size)]

    def log_of(chunk: list[str]) -> subprocess.CompletedProcess:
        args = ["log", "--no-walk=unsorted", "--no-color", f"--format={fmt}", "--end-of-options", *chunk]
        return _run(repo, args, keyring)

    with ThreadPoolExecutor(max_workers=min(workers, len(chunks) or 1)) as pool:
        procs = list(pool.map(log_of, chunks))
    out: dict[str, SignatureCheck] = {}
    for proc in procs:
        for raw in proc.stdout.decode("utf-8", "replace").split(rec):
            parts = raw.strip("\n").split(fld)
            if len(parts) != 6:
                continue
            sha, letter, principal, fp, primary, keyid = (p.strip() for p in parts)
            out[sha] = _check(keyring, _STATUS.get(letter, "error"), principal, fp, primary, keyid)
    return out


def _check(keyring: Keyring, status: str, principal: str, fp: str, primary: str, keyid: str) -> SignatureCheck:
    if fp.startswith("SHA256:") or status == "none":  # SSH: the principal is the allowed-signers line's
        return SignatureCheck(status, principal if status == "good" else "", fp)
    if status == "error" and keyid and not fp:
        return SignatureCheck("unknown_key", "", keyid)  # gpg: no public key (the keyring holds only listed keys)
    owner = keyring.gpg_owners.get(primary.upper()) or keyring.gpg_owners.get(fp.upper())
    if status in ("good", "unknown_key") and owner is None:
        return SignatureCheck("unknown_key", "", fp or keyid)
    return SignatureCheck(status, owner if status == "good" and owner else "", fp or keyid)


def annotated_tags(repo) -> list[tuple[str, str, str, datetime]]:
    """(name, tag object sha, peeled commit, tagger date) of the MAX_TAGS newest annotated tags."""
    nonce = secrets.token_hex(8)
    rec, fld = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + fld.join(("%(refname)", "%(objectname)", "%(objecttype)", "%(taggerdate:unix)"))
    proc = _run(repo, ["for-each-ref", f"--format={fmt}", "refs/tags/"], None)
    tags = []
    for raw in proc.stdout.decode("utf-8", "replace").split(rec):
        parts = raw.strip("\n").split(fld)
        if len(parts) != 4 or parts[2] != "tag" or not _HEX.match(parts[1]):
            continue  # lightweight tags carry no signature
        try:
            when = datetime.fromtimestamp(int(parts[3]), UTC)
        except (ValueError, OverflowError, OSError):
            when = EPOCH  # an unreadable tagger date sorts as the oldest
        tags.append((parts[0].removeprefix("refs/tags/"), parts[1], when))
    tags.sort(key=lambda t: t[2], reverse=True)
    tags = tags[:MAX_TAGS]
    if not tags:
        return []
    # Nested tags peel through every level; a tag of a tree or blob has no commit.
    peel = subprocess.run(
        ["git", f"--git-dir={repo.git_dir}", *SAFE_OPTS, "cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input="".join(f"{sha}^{{commit}}\n" for _, sha, _ in tags).encode(),
        capture_output=True,
        env={**os.environ, **SAFE_ENV},
        timeout=TIMEOUT_S,
    )
    lines = peel.stdout.decode("utf-8", "replace").splitlines()
    if len(lines) != len(tags):  # cat-file answers every line it is given, "missing" included
        raise SignatureError(f"{repo.git_dir}: git cat-file answered {len(lines)} lines for {len(tags)} tags")
    out = []
    for (name, sha, when), line in zip(tags, lines, strict=True):
        obj, _, typ = line.partition(" ")
        out.append((name, sha, obj if typ == "commit" else "", when))
    return out


def tag_signatures(repo, keyring: Keyring) -> list[TagSignature]:
    """The newest MAX_TAGS annotated tags, each checked with ``git verify-tag`` (newest first)."""
    return check_tags(repo, annotated_tags(repo), keyring)


def check_tags(repo, tags: list[tuple[str, str, str, datetime]], keyring: Keyring) -> list[TagSignature]:
    """Each of ``annotated_tags``' tags checked with its own ``git verify-tag``.

    Good only when verify-tag succeeds and the signer is a listed key: for SSH,
    ssh-keygen named a principal from the allowed-signers file; for OpenPGP,
    gpg's VALIDSIG names a fingerprint the keyring's owners map holds.
    """
    results = []
    for name, sha, commit, when in tags:
        proc = _run(repo, ["verify-tag", "--raw", "--end-of-options", sha], keyring, check=False)
        text = proc.stderr.decode("utf-8", "replace")
        status, principal, fp = _gpg_tag(keyring, text) if "[GNUPG:]" in text else _ssh_tag(text)
        if status == "good" and proc.returncode != 0:
            status, principal = "error", ""
        results.append(TagSignature(name, commit, principal, when, status, fp))
    return results


def _ssh_tag(text: str) -> tuple[str, str, str]:
    good, anon = _GOOD_FOR.search(text), _GOOD_ANON.search(text)
    if good:
        return "good", good.group(1), good.group(2)
    if "No principal matched" in text or anon:
        return "unknown_key", "", anon.group(1) if anon else ""
    if "no signature found" in text:
        return "none", "", ""
    if "Signature verification failed" in text or "Could not verify signature" in text:
        return "bad", "", ""
    return "error", "", ""


# gpg --status-fd keywords (doc/DETAILS) -> status; VALIDSIG carries the fingerprints.
_GPG_STATUS = {"EXPKEYSIG": "expired", "EXPSIG": "expired", "REVKEYSIG": "revoked", "BADSIG": "bad"}


def _gpg_tag(keyring: Keyring, text: str) -> tuple[str, str, str]:
    words = {
        ln.split()[1]: ln.split()[2:] for ln in text.splitlines() if ln.startswith("[GNUPG:] ") and len(ln.split()) > 1
    }
    valid = words.get("VALIDSIG", [])
    fp, primary = (valid[0], valid[-1]) if valid else ("", "")
    for key, status in _GPG_STATUS.items():
        if key in words:
            return status, "", fp or (words[key][0] if words[key] else "")
    if "ERRSIG" in words or "NO_PUBKEY" in words:
        return "unknown_key", "", (words.get("ERRSIG") or [""])[0]
    if "GOODSIG" in words and valid:
        owner = keyring.gpg_owners.get(primary.upper()) or keyring.gpg_owners.get(fp.upper())
        return ("good", owner, fp) if owner else ("unknown_key", "", fp)
    return "error", "", fp


# Why a present signature is not authenticated evidence: said in the link's detail.
NOT_VERIFIED = {
    "unknown_key": "signed by a key the operator does not list",
    "bad": "bad signature: the commit is not what was signed",
    "expired": "signed by an expired key",
    "revoked": "signed by a revoked key",
    "error": "the signature could not be checked",
}


def signature_links(
    touches, substantive: dict[str, bool], checks: dict[str, SignatureCheck], ids: Identities
) -> list[Link]:
    """A ``signature`` link for each signed commit that touched the file (touches newest first).

    Good: authenticated, and the verifier is the signer (the key's owner), never
    the author; a platform's signature attests a merge, not a review, so it makes
    no signature link here (extractors.verification reads it).  Any other
    signature is kept as a claimed link with no authority whose detail says why.
    Stale when a newer substantive touch exists: the rule ``chain_for_file``
    applies to trailers.
    """
    links: list[Link] = []
    for i, c in enumerate(touches):
        check = checks.get(c.sha)
        if check is None or check.status == "none":
            continue
        stale = any(substantive.get(t.sha) for t in touches[:i])
        key = check.fingerprint or "unknown"
        if check.status != "good" or not check.principal:
            reason = NOT_VERIFIED.get(check.status, NOT_VERIFIED["error"])
            links.append(
                Link(
                    "unverified signer",
                    "",
                    "",
                    "unknown",
                    "signature",
                    c.sha,
                    c.commit_date,
                    stale,
                    f"signature on {c.sha[:12]} not verified: {reason} (key {key}): no authority",
                    CLAIMED,
                )
            )
            continue
        if ids.platform_by_email(check.principal):
            continue
        person = ids.person_by_email(check.principal)
        links.append(
            make_link(
                ids,
                person.name if person else check.principal,
                check.principal,
                "signature",
                c.sha,
                c.commit_date,
                stale,
                f"signed commit {c.sha[:12]} (key {key})",
                evidence_class=AUTHENTICATED,
            )
        )
    return links
