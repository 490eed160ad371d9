"""The operator's keys, as git verifies signatures against them: an SSH allowed-signers file and a private GnuPG home.

Only keys listed in identities.toml (persons' ``signing_keys`` / ``gpg_keys``, platforms' keys) are in either.
The GnuPG home is a new temporary directory for each verification run: it holds only the imported operator
keys, each with ultimate ownertrust so that a listed key's good signature is git's ``G``; its gpg.conf turns
off key retrieval and any network (no keyserver, no auto-key-retrieve, no agent or dirmngr autostart).
Nothing from a user's keyring or a repository can be in it.  A revocation certificate listed among a person's
``gpg_keys`` is imported like a key, and revokes it.

``digest`` names everything a check depends on (both files' contents and who owns each key), so a cached
check is reused only for the same keys; ``valid_until`` is the first future expiry of a listed key, after
which a cached ``good`` may no longer be.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from trustindex.schemas.config import Identities
from trustindex.schemas.errors import TrustIndexError

log = logging.getLogger(__name__)

TIMEOUT_S = 120
GPG_CONF = "no-auto-key-retrieve\nno-autostart\nauto-key-locate local\ntrust-model pgp\n"


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
    """Write ``<email> namespaces="git" <key>`` per person e-mail x key, and per platform its committer address
    x key; None when nobody has a key.

    Malformed keys and e-mails that are not plain addresses are skipped with a
    warning.  A key listed for two different owners is skipped for all of them:
    git would report whichever line came first, so the signer would be a guess.
    """
    listed = [(p.name, p.emails, p.signing_keys) for p in ids.people]
    listed += [(f"platform {p.name}", (p.committer_email,), p.signing_keys) for p in ids.platforms]
    owners: dict[str, set[str]] = {}
    for owner, _emails, keys in listed:
        for key in keys:
            line = _key_line(key)
            if line is None:
                log.warning("identities: %s: signing key %r is not a valid SSH public key; skipped", owner, key[:40])
                continue
            owners.setdefault(line, set()).add(owner)
    lines: list[str] = []
    for owner, emails, keys in listed:
        good = []
        for key in keys:
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
            good.append(line)
        for email in emails:
            e = email.strip().lower()
            if not _EMAIL.match(e):
                log.warning("identities: %s: e-mail %r cannot be an SSH principal; skipped", owner, email)
                continue
            lines.extend(f'{e} namespaces="git" {k}' for k in dict.fromkeys(good))
    if not lines:
        return None
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "allowed_signers"
    path.write_text("\n".join(dict.fromkeys(lines)) + "\n", encoding="utf-8")
    return path


class KeyringError(TrustIndexError):
    """The operator's keys cannot be set up for verification (gpg missing or refusing a key)."""


@dataclass
class Keyring:
    allowed: Path | None  # SSH allowed-signers file (None: no SSH key listed)
    gnupghome: Path | None = None  # private GnuPG home (None: no OpenPGP key listed)
    gpg_owners: dict[str, str] = field(default_factory=dict)  # key fingerprint (primary or subkey) -> principal
    digest: str = ""
    valid_until: float | None = None  # epoch seconds

    @classmethod
    def ssh(cls, allowed: Path) -> Keyring:
        """SSH keys only (no OpenPGP signature can be good)."""
        return cls(allowed, digest=keys_digest(Path(allowed).read_text(encoding="utf-8"), []))

    def git_opts(self) -> list[str]:
        """``-c`` settings that fix every program git may run to verify a signature, and what it reads."""
        false = _program("false")
        gpg = _program("gpg") if self.gnupghome else false
        return [
            *("-c", f"gpg.program={gpg}", "-c", f"gpg.openpgp.program={gpg}", "-c", f"gpg.x509.program={false}"),
            *("-c", f"gpg.ssh.program={_program('ssh-keygen')}"),
            *("-c", f"gpg.ssh.allowedSignersFile={Path(self.allowed).resolve() if self.allowed else os.devnull}"),
            *("-c", f"gpg.ssh.revocationFile={os.devnull}", "-c", "gpg.minTrustLevel=undefined"),
        ]

    def env(self) -> dict[str, str]:
        """GnuPG reads its home from the environment: the private one (or an empty path that holds nothing)."""
        return {"GNUPGHOME": str(self.gnupghome) if self.gnupghome else os.devnull}


def _program(name: str) -> str:
    found = shutil.which(name)
    if not found:
        package = "gnupg" if name == "gpg" else "openssh-client"
        raise KeyringError(f"cannot check signatures: {name!r} is not installed (apt-get install {package})")
    return found


def keys_digest(allowed: str, gpg: list[tuple[str, str, str]]) -> str:
    """Names the keys and who owns each: the allowed-signers text and every (principal, OpenPGP block) pair.
    Computed without gpg, so a fully cached run needs no keyring at all."""
    pairs = sorted((principal, block) for _owner, principal, block in gpg)
    return hashlib.sha256(json.dumps({"allowed": allowed, "gpg": pairs}).encode()).hexdigest()


def operator_keys_digest(ids: Identities, directory: Path) -> str | None:
    """The digest of the keys ``operator_keyring`` would hold (None: nobody lists a key)."""
    allowed = allowed_signers_file(ids, directory)
    gpg = gpg_principals(ids)
    if allowed is None and not gpg:
        return None
    return keys_digest(allowed.read_text(encoding="utf-8") if allowed else "", gpg)


def gpg_principals(ids: Identities) -> list[tuple[str, str, str]]:
    """(owner, principal, armored block) for every listed OpenPGP block: a person's first address, a platform's
    committer address."""
    out = []
    for person in ids.people:
        principal = next((e.strip().lower() for e in person.emails if e.strip()), "")
        out.extend((person.name, principal, block) for block in person.gpg_keys if principal)
    for p in ids.platforms:
        out.extend((f"platform {p.name}", p.committer_email, block) for block in p.gpg_keys)
    return out


def _gpg(home: Path, *args: str, data: bytes | None = None) -> str:
    cmd = [_program("gpg"), "--homedir", str(home), "--batch", "--no-tty", "--with-colons", *args]
    try:
        proc = subprocess.run(
            cmd,
            input=data,
            capture_output=True,
            timeout=TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", ""), "GNUPGHOME": str(home), "LC_ALL": "C"},
        )
    except subprocess.TimeoutExpired:
        raise KeyringError(f"gpg {args[-1]} took over {TIMEOUT_S} s") from None
    if proc.returncode not in (0, 2):  # 2: some block was not a key (e.g. a revocation of a key not listed)
        raise KeyringError(f"gpg {' '.join(args)} failed: {proc.stderr.decode('utf-8', 'replace').strip()[-300:]}")
    return proc.stdout.decode("utf-8", "replace")


def _fingerprints(colons: str) -> list[str]:
    return [line.split(":")[9].upper() for line in colons.splitlines() if line.startswith("fpr:")]


def _gnupg_home(ids: Identities, home: Path) -> tuple[dict[str, str], float | None]:
    """Import the listed OpenPGP blocks into ``home``; the owners map and the first future expiry."""
    (home / "gpg.conf").write_text(GPG_CONF, encoding="utf-8")
    listed = gpg_principals(ids)
    claims: dict[str, set[str]] = {}
    primaries: dict[str, str] = {}
    for owner, principal, block in listed:
        fprs = _fingerprints(_gpg(home, "--import-options", "show-only", "--import", data=block.encode()))
        for fpr in fprs:
            claims.setdefault(fpr, set()).add(principal)
        if fprs:
            primaries.setdefault(fprs[0], principal)
        elif "PUBLIC KEY BLOCK" in block and "REVOCATION" not in block.upper():
            log.warning("identities: %s: a gpg_keys entry holds no key; skipped", owner)
    owners = {fpr: next(iter(p)) for fpr, p in claims.items() if len(p) == 1}
    for fpr, p in claims.items():
        if len(p) > 1:
            log.warning("identities: OpenPGP key %s is listed for %s; skipped for all", fpr, ", ".join(sorted(p)))
    blocks = [block for _o, _p, block in listed]
    _gpg(home, "--import", data="\n".join(blocks).encode())
    trust = "".join(f"{fpr}:6:\n" for fpr in primaries if fpr in owners)
    if trust:
        _gpg(home, "--import-ownertrust", data=trust.encode())
    now = time.time()
    expiries = [
        float(line.split(":")[6])
        for line in _gpg(home, "--list-keys").splitlines()
        if line.startswith(("pub:", "sub:")) and line.split(":")[6].isdigit() and float(line.split(":")[6]) > now
    ]
    return owners, min(expiries) if expiries else None


@contextmanager
def operator_keyring(ids: Identities, directory: Path) -> Iterator[Keyring | None]:
    """The operator's keys for one verification run (None: nobody lists a key); the GnuPG home is removed after."""
    allowed = allowed_signers_file(ids, directory)
    allowed_text = allowed.read_text(encoding="utf-8") if allowed else ""
    if not gpg_principals(ids):
        yield Keyring(allowed, digest=keys_digest(allowed_text, [])) if allowed else None
        return
    with tempfile.TemporaryDirectory(prefix="trustindex-gnupg-") as tmp:
        home = Path(tmp)
        home.chmod(0o700)
        owners, valid_until = _gnupg_home(ids, home)
        yield Keyring(allowed, home, owners, keys_digest(allowed_text, gpg_principals(ids)), valid_until)
