"""Signatures on commits and tags, checked by git itself against the operator's signers.

DESIGN: "signatures on commits and tags checked by git itself against signers
the operator lists".  The signers are the ``signing_keys`` of persons in
identities.toml, written here into an SSH allowed-signers file (format:
ssh-keygen(1), "ALLOWED SIGNERS"); nothing inside a crawled repository can add
one.  Git verifies SSH signatures by running ``ssh-keygen -Y find-principals``
and ``-Y verify`` against that file (git-config(1) ``gpg.ssh.*``), so the
principal git reports is always a line the operator wrote.

What can run: every command passes ``-c`` settings for all of git's signature
programs (``gpg.program``, ``gpg.openpgp.program``, ``gpg.x509.program``,
``gpg.ssh.program``) plus the allowed-signers and revocation files.  Command-
line configuration wins over the repository's own (git-config(1) "FILES":
``-c`` is read last), and SAFE_ENV disables system/global configuration, so a
repository config cannot choose a program.  OpenPGP and X.509 signatures go to
``false``: the operator lists no GPG keyring, so they are never "good" (git
reports them as ``N``, the same as unsigned).

Tags: git 2.39 has no ``%(signature)`` atom for tags, so each annotated tag is
checked with its own ``git verify-tag`` process; the count is bounded to the
MAX_TAGS newest (by tagger date).
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustindex.crawl.git import SAFE_ENV, SAFE_OPTS
from trustindex.extractors.verification import Link, make_link
from trustindex.schemas.config import Identities
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.tables import AUTHENTICATED

log = logging.getLogger(__name__)

CHUNK = 500  # shas per ``git log`` process: keeps the command line far below ARG_MAX
MAX_TAGS = 200  # newest annotated tags checked, one ``git verify-tag`` each
TIMEOUT_S = 300
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Key types ssh-keygen accepts in an allowed-signers file (sshkey.c keytypes, OpenSSH 9).
KEY_TYPES = frozenset(
    {
        "ssh-ed25519",
        "ssh-rsa",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
    }
)
# A principal is a pattern list (ssh-keygen(1)): ``*``, ``?``, ``!`` and ``,`` would
# widen it or split it, and quotes/whitespace would break the line, so only plain
# addresses are written.
_EMAIL = re.compile(r"^[a-z0-9._%+-]+@[a-z0-9.-]+$")
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


def _key_line(key: str) -> str | None:
    """``<type> <base64>`` when ``key`` is a well-formed public key, else None.

    The blob's first length-prefixed string must name the same type (RFC 4253
    section 6.6); the comment is dropped: it is free text and never needed.
    """
    parts = key.strip().split()
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        return None
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        return None
    n = int.from_bytes(blob[:4], "big") if len(blob) >= 4 else -1
    if n <= 0 or blob[4 : 4 + n] != parts[0].encode():
        return None
    return f"{parts[0]} {parts[1]}"


def allowed_signers_file(ids: Identities, directory: Path) -> Path | None:
    """Write ``<email> namespaces="git" <key>`` per person e-mail x key; None when nobody has a key.

    Malformed keys and e-mails that are not plain addresses are skipped with a
    warning.  A key listed for two different persons is skipped for both: git
    would report whichever line came first, so the signer would be a guess.
    """
    owners: dict[str, set[str]] = {}
    for person in ids.people:
        for key in person.signing_keys:
            line = _key_line(key)
            if line is None:
                log.warning(
                    "identities: %s: signing key %r is not a valid SSH public key; skipped", person.name, key[:40]
                )
                continue
            owners.setdefault(line, set()).add(person.name)
    lines: list[str] = []
    for person in ids.people:
        keys = []
        for key in person.signing_keys:
            line = _key_line(key)
            if line is None:
                continue
            if len(owners[line]) > 1:
                log.warning(
                    "identities: signing key %s… is listed for %s; skipped for all of them",
                    line[:40],
                    ", ".join(sorted(owners[line])),
                )
                continue
            keys.append(line)
        for email in person.emails:
            e = email.strip().lower()
            if not _EMAIL.match(e):
                log.warning("identities: %s: e-mail %r cannot be an SSH principal; skipped", person.name, email)
                continue
            lines.extend(f'{e} namespaces="git" {k}' for k in dict.fromkeys(keys))
    if not lines:
        return None
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "allowed_signers"
    path.write_text("\n".join(dict.fromkeys(lines)) + "\n", encoding="utf-8")
    return path


def _program(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise SignatureError(f"cannot check signatures: {name!r} is not installed (apt-get install openssh-client)")
    return found


def _signature_opts(allowed: Path) -> list[str]:
    """``-c`` settings that fix every program git may run to verify a signature."""
    false = _program("false")
    return [
        "-c",
        f"gpg.program={false}",
        "-c",
        f"gpg.openpgp.program={false}",
        "-c",
        f"gpg.x509.program={false}",
        "-c",
        f"gpg.ssh.program={_program('ssh-keygen')}",
        "-c",
        f"gpg.ssh.allowedSignersFile={Path(allowed).resolve()}",
        "-c",
        f"gpg.ssh.revocationFile={os.devnull}",
        "-c",
        "gpg.minTrustLevel=undefined",
    ]


def _run(repo, args: list[str], allowed: Path, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["git", f"--git-dir={repo.git_dir}", *SAFE_OPTS, *_signature_opts(allowed), *args]
    env = {**os.environ, **SAFE_ENV}
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


def commit_signatures(repo, shas: list[str], allowed: Path) -> dict[str, SignatureCheck]:
    """Each commit's signature status, from ``git log --no-walk`` (one process per CHUNK shas).

    Status ``good`` is git's ``G`` only: a valid signature whose key the
    allowed-signers file lists, and ``principal`` is the e-mail on that line,
    which may differ from the commit's author.  Shas that are not full hex
    object names raise; unknown ones make git fail the chunk (SignatureError).
    """
    wanted = list(dict.fromkeys(s.strip().lower() for s in shas))
    for s in wanted:
        if not _HEX.match(s):
            raise SignatureError(f"not a full commit sha: {s[:80]!r}")
    nonce = secrets.token_hex(8)
    rec, fld = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + fld.join(("%H", "%G?", "%GS", "%GF"))
    out: dict[str, SignatureCheck] = {}
    for i in range(0, len(wanted), CHUNK):
        chunk = wanted[i : i + CHUNK]
        proc = _run(
            repo, ["log", "--no-walk=unsorted", "--no-color", f"--format={fmt}", "--end-of-options", *chunk], allowed
        )
        for raw in proc.stdout.decode("utf-8", "replace").split(rec):
            parts = raw.strip("\n").split(fld)
            if len(parts) != 4:
                continue
            sha, letter, principal, fp = parts
            status = _STATUS.get(letter, "error")
            out[sha] = SignatureCheck(status, principal if status == "good" else "", fp.strip())
    return out


def _annotated_tags(repo, allowed: Path) -> list[tuple[str, str, str, datetime]]:
    """(name, tag object sha, peeled commit, tagger date) of the MAX_TAGS newest annotated tags."""
    nonce = secrets.token_hex(8)
    rec, fld = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec + fld.join(("%(refname)", "%(objectname)", "%(objecttype)", "%(taggerdate:unix)"))
    proc = _run(repo, ["for-each-ref", f"--format={fmt}", "refs/tags/"], allowed)
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


def tag_signatures(repo, allowed: Path) -> list[TagSignature]:
    """The newest MAX_TAGS annotated tags, each checked with ``git verify-tag`` (newest first).

    Good only when verify-tag succeeds (git's ``G``) and ssh-keygen named a
    principal from the allowed-signers file.
    """
    results = []
    for name, sha, commit, when in _annotated_tags(repo, allowed):
        proc = _run(repo, ["verify-tag", "--end-of-options", sha], allowed, check=False)
        text = proc.stderr.decode("utf-8", "replace")
        good, anon = _GOOD_FOR.search(text), _GOOD_ANON.search(text)
        if proc.returncode == 0 and good:
            status, principal, fp = "good", good.group(1), good.group(2)
        elif "No principal matched" in text or anon:
            status, principal, fp = "unknown_key", "", anon.group(1) if anon else ""
        elif "no signature found" in text:
            status, principal, fp = "none", "", ""
        elif "Signature verification failed" in text or "Could not verify signature" in text:
            status, principal, fp = "bad", "", ""
        else:
            status, principal, fp = "error", "", ""
        results.append(TagSignature(name, commit, principal, when, status, fp))
    return results


def signature_links(
    touches, substantive: dict[str, bool], checks: dict[str, SignatureCheck], ids: Identities
) -> list[Link]:
    """A ``signature`` link for each good-signed commit that touched the file (touches newest first).

    The verifier is the signer (the allowed-signers principal), never the
    author.  Stale when a newer substantive touch exists: the rule
    ``chain_for_file`` applies to trailers.
    """
    links: list[Link] = []
    for i, c in enumerate(touches):
        check = checks.get(c.sha)
        if check is None or check.status != "good" or not check.principal:
            continue
        stale = any(substantive.get(t.sha) for t in touches[:i])
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
                f"signed commit {c.sha[:12]} (key {check.fingerprint or 'unknown'})",
                evidence_class=AUTHENTICATED,
            )
        )
    return links
