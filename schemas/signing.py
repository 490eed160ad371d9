"""Signed snapshots (contract): who exported a snapshot, not only that its files agree with its manifest.

``trustindex export --sign-key FILE`` writes ``manifest.sig`` next to a snapshot's ``manifest.json``: an Ed25519
signature (the ``cryptography`` package) over the manifest's exact bytes, which name the snapshot id, every file's
path, size and sha256, the sources and their commits, the model and the row counts.  ``serve --trusted-key`` and
``Index.open(trusted_keys=...)`` check it against the operator's pinned public keys (more than one: key rotation)
before any other file of the snapshot is read.

The signed message is ``DOMAIN_V2 + statement + NUL + manifest bytes``: a signature made for something else with
the same key cannot pass as a manifest's.  The statement (``Freshness``, canonical JSON, also written out in
``manifest.sig``) is what TUF's timestamp role teaches, simply: a ``sequence`` that grows with every export to a
target (a replica refuses a snapshot older than the newest it has verified: no rollback), when it was signed, and
an optional ``expires_at`` (``export --valid-for``: a target nobody re-signs stops being ready).  A signature of
before the statement (v1: ``DOMAIN + manifest bytes``) still verifies, as sequence 0 without expiry, so a replica
that has seen a v2 export refuses it.  Keys are PEM (PKCS#8 private, SubjectPublicKeyInfo public); a key's id is
the first 16 hex digits of the sha256 of its raw 32 public bytes, named in ``manifest.sig`` and in every error so
an operator can tell which key signed and which keys are pinned.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustindex.schemas.errors import SnapshotError, TrustIndexError
from trustindex.schemas.secret_files import private_folder, warn_if_exposed
from trustindex.schemas.snapshot import MANIFEST, SIGNATURE

PRIVATE_KEY = "signing.key"
PUBLIC_KEY = "signing.pub"
DOMAIN = b"trustindex snapshot manifest v1\0"  # signatures of before the freshness statement (issue 27)
DOMAIN_V2 = b"trustindex snapshot manifest v2\0"
MAX_SIGNATURE_BYTES = 4096  # a signature file is ~300 bytes; anything much larger is not one
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class SignatureError(SnapshotError):
    """A snapshot is unsigned, or its signature is not one of a trusted key's over its manifest."""


@dataclass(frozen=True)
class TrustedKey:
    key_id: str
    raw: bytes  # the 32 public bytes
    where: str  # the file it came from, for messages


@dataclass(frozen=True)
class Freshness:
    """What a signature says besides the manifest: the export's place in the target's order, when it was signed and
    until when a replica may call it current (None: no expiry)."""

    sequence: int
    signed_at: str  # ISO 8601, UTC
    expires_at: str | None = None

    def statement(self) -> bytes:
        """The bytes signed with the manifest (canonical JSON)."""
        fields = {"expires_at": self.expires_at, "sequence": self.sequence, "signed_at": self.signed_at}
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()

    def expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and (now or datetime.now(UTC)) >= parse_time(self.expires_at)


@dataclass(frozen=True)
class SignedManifest:
    """A verified signature: the pinned key that made it and its freshness (None: a v1 signature)."""

    key_id: str
    freshness: Freshness | None = None

    @property
    def sequence(self) -> int:
        return self.freshness.sequence if self.freshness is not None else 0


def parse_time(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def parse_duration(text: str, what: str) -> float:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` (or plain seconds) in seconds; one error naming ``what``."""
    m = _DURATION.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise TrustIndexError(f"{what}: {text!r} is not a duration (a positive number and s, m, h, d or w: 12h, 7d)")
    return float(m.group(1)) * _UNIT_SECONDS[m.group(2) or "s"]


def _raw_public(public) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(raw_public: bytes) -> str:
    return hashlib.sha256(raw_public).hexdigest()[:16]


def generate_keys(out_dir: str | Path) -> tuple[Path, Path]:
    """A new key pair in ``out_dir``: ``signing.key`` (created with mode 0600, never overwritten) and
    ``signing.pub``.  Returns both paths."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    out = private_folder(out_dir)  # 0700 whatever the umask: the folder holds the private key
    key_path, pub_path = out / PRIVATE_KEY, out / PUBLIC_KEY
    for p in (key_path, pub_path):
        if p.exists() or p.is_symlink():
            raise TrustIndexError(f"{p}: already exists; keys are never overwritten (move it away first)")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # O_EXCL with the mode given at creation: the key is never readable by others, not even for an instant
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, 0o600)  # the mode given at creation is masked by the umask: an owner who cannot read it is no use
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    pub = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    fd = os.open(pub_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.fchmod(fd, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(pub)
    return key_path, pub_path


def load_trusted_keys(paths: Iterable[str | Path]) -> list[TrustedKey]:
    """The public keys an operator pins (``--trusted-key FILE``, repeatable); a file that is not an Ed25519 public
    key is one error naming it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    keys = []
    for p in paths:
        path = Path(p)
        try:
            key = serialization.load_pem_public_key(path.read_bytes())
        except OSError as e:
            raise TrustIndexError(f"{path}: cannot read the trusted key ({e.strerror})") from None
        except ValueError:
            raise TrustIndexError(
                f"{path}: not a PEM public key (give the signing.pub `keys generate` wrote)"
            ) from None
        if not isinstance(key, Ed25519PublicKey):
            raise TrustIndexError(f"{path}: not an Ed25519 public key")
        raw = _raw_public(key)
        keys.append(TrustedKey(key_id(raw), raw, str(path)))
    return keys


def sign_manifest(manifest_bytes: bytes, key_file: str | Path, freshness: Freshness | None = None) -> bytes:
    """The content of ``manifest.sig`` for these manifest bytes, signed with the private key in ``key_file``, with
    ``freshness`` (default: sequence 0, signed now, no expiry; the export passes its own)."""
    private = load_private_key(key_file)
    fresh = freshness or Freshness(0, datetime.now(UTC).isoformat(timespec="seconds"))
    signature = private.sign(DOMAIN_V2 + fresh.statement() + b"\0" + manifest_bytes)
    doc = {
        "algorithm": "ed25519",
        "version": 2,
        "key_id": key_id(_raw_public(private.public_key())),
        "signature": base64.b64encode(signature).decode(),
        "sequence": fresh.sequence,
        "signed_at": fresh.signed_at,
        "expires_at": fresh.expires_at,
    }
    return (json.dumps(doc, sort_keys=True) + "\n").encode()


def load_private_key(key_file: str | Path):
    """The Ed25519 private key in ``key_file`` (a warning when other accounts can read it); one error otherwise."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(key_file)
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as e:
        raise TrustIndexError(f"{path}: cannot read the signing key ({e.strerror})") from None
    except (ValueError, TypeError):
        raise TrustIndexError(
            f"{path}: not an unencrypted PEM private key (give the signing.key `keys generate` wrote)"
        ) from None
    if not isinstance(private, Ed25519PrivateKey):
        raise TrustIndexError(f"{path}: not an Ed25519 private key")
    warn_if_exposed(path, "the export signing key")
    return private


def public_key_of(key_file: str | Path) -> TrustedKey:
    """The public half of the private key in ``key_file``, as a pinned key (the export checks its own signatures)."""
    raw = _raw_public(load_private_key(key_file).public_key())
    return TrustedKey(key_id(raw), raw, str(key_file))


def signature_key_id(signature: bytes) -> str:
    """The key id a ``manifest.sig`` names (what ``sign_manifest`` wrote; not a check of anything)."""
    return str(json.loads(signature)["key_id"])


def verify_manifest_signature(
    manifest_bytes: bytes, signature: bytes | None, trusted: Sequence[TrustedKey], where: str
) -> SignedManifest:
    """The trusted key whose signature ``signature`` (``manifest.sig``'s bytes, None when absent) is over
    ``manifest_bytes``, with the freshness it signed; else SignatureError, one line naming ``where`` and what is
    wrong."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    pinned = ", ".join(k.key_id for k in trusted)
    if signature is None:
        raise SignatureError(f"{where}: unsigned (no {SIGNATURE}); this server trusts only exports signed by {pinned}")
    try:
        sig, claimed, freshness = _parse_signature(signature)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise SignatureError(f"{where}: {SIGNATURE} is not a signature file") from None
    message = (
        DOMAIN + manifest_bytes if freshness is None else DOMAIN_V2 + freshness.statement() + b"\0" + manifest_bytes
    )
    for k in trusted:  # every pinned key is tried: the claimed id is a hint for the message, not trusted
        try:
            Ed25519PublicKey.from_public_bytes(k.raw).verify(sig, message)
            return SignedManifest(k.key_id, freshness)
        except InvalidSignature:
            continue
    known = any(k.key_id == claimed for k in trusted)
    why = "does not match the manifest (edited after signing)" if known else f"is by key {claimed[:16]!r}, not trusted"
    raise SignatureError(f"{where}: the signature {why}; trusted keys: {pinned}")


def _parse_signature(signature: bytes) -> tuple[bytes, str, Freshness | None]:
    """The signature bytes, the key id it claims and its freshness (None: v1); ValueError and its kin when the file
    is not one."""
    if len(signature) > MAX_SIGNATURE_BYTES:
        raise ValueError("too large")
    doc = json.loads(signature)
    sig = base64.b64decode(doc["signature"], validate=True)
    if doc.get("algorithm") != "ed25519" or len(sig) != 64:
        raise ValueError("not an ed25519 signature")
    if doc.get("version", 1) == 1:
        return sig, str(doc.get("key_id", "")), None
    sequence, signed_at, expires_at = doc["sequence"], doc["signed_at"], doc.get("expires_at")
    if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0 or doc["version"] != 2:
        raise ValueError("not a sequence")
    for t in (signed_at, expires_at):
        if t is not None:
            parse_time(t)  # ValueError when not ISO 8601 (or not a string: TypeError)
    return sig, str(doc.get("key_id", "")), Freshness(sequence, signed_at, expires_at)


def verify_snapshot_signature(directory: Path, trusted: Sequence[TrustedKey]) -> SignedManifest:
    """``verify_manifest_signature`` for a local snapshot directory (``manifest.json`` and ``manifest.sig``)."""
    sig_path = directory / SIGNATURE
    try:
        signature = sig_path.read_bytes() if sig_path.is_file() and not sig_path.is_symlink() else None
        manifest = (directory / MANIFEST).read_bytes()
    except OSError as e:
        raise SignatureError(f"{directory}: cannot read the manifest or its signature ({e.strerror})") from None
    return verify_manifest_signature(manifest, signature, trusted, f"snapshot {directory.name}")


def signed_by_trusted(directory: Path, trusted_keys: Sequence[str | Path | TrustedKey]) -> SignedManifest:
    """``Index.open(trusted_keys=...)``: key files or loaded keys; the one that signed ``directory``, and how."""
    keys = [k for k in trusted_keys if isinstance(k, TrustedKey)]
    keys += load_trusted_keys([k for k in trusted_keys if not isinstance(k, TrustedKey)])
    if not keys:
        raise SignatureError(f"{directory}: trusted_keys is empty; give at least one public key")
    return verify_snapshot_signature(directory, keys)
