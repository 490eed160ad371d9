"""Signed snapshots (contract): who exported a snapshot, not only that its files agree with its manifest.

``trustindex export --sign-key FILE`` writes ``manifest.sig`` next to a snapshot's ``manifest.json``: an Ed25519
signature (the ``cryptography`` package) over the manifest's exact bytes, which name the snapshot id, every file's
path, size and sha256, the sources and their commits, the model and the row counts.  ``serve --trusted-key`` and
``Index.open(trusted_keys=...)`` check it against the operator's pinned public keys (more than one: key rotation)
before any other file of the snapshot is read.

The signed message is ``DOMAIN + manifest bytes``: a signature made for something else with the same key cannot
pass as a manifest's.  Keys are PEM (PKCS#8 private, SubjectPublicKeyInfo public); a key's id is the first 16 hex
digits of the sha256 of its raw 32 public bytes, named in ``manifest.sig`` and in every error so an operator can
tell which key signed and which keys are pinned.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from trustindex.schemas.errors import SnapshotError, TrustIndexError
from trustindex.schemas.snapshot import MANIFEST, SIGNATURE

PRIVATE_KEY = "signing.key"
PUBLIC_KEY = "signing.pub"
DOMAIN = b"trustindex snapshot manifest v1\0"
MAX_SIGNATURE_BYTES = 4096  # a signature file is ~200 bytes; anything much larger is not one


class SignatureError(SnapshotError):
    """A snapshot is unsigned, or its signature is not one of a trusted key's over its manifest."""


@dataclass(frozen=True)
class TrustedKey:
    key_id: str
    raw: bytes  # the 32 public bytes
    where: str  # the file it came from, for messages


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

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
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
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    pub = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    fd = os.open(pub_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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


def sign_manifest(manifest_bytes: bytes, key_file: str | Path) -> bytes:
    """The content of ``manifest.sig`` for these manifest bytes, signed with the private key in ``key_file``."""
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
    signature = private.sign(DOMAIN + manifest_bytes)
    doc = {
        "algorithm": "ed25519",
        "key_id": key_id(_raw_public(private.public_key())),
        "signature": base64.b64encode(signature).decode(),
    }
    return (json.dumps(doc, sort_keys=True) + "\n").encode()


def signature_key_id(signature: bytes) -> str:
    """The key id a ``manifest.sig`` names (what ``sign_manifest`` wrote; not a check of anything)."""
    return str(json.loads(signature)["key_id"])


def verify_manifest_signature(
    manifest_bytes: bytes, signature: bytes | None, trusted: Sequence[TrustedKey], where: str
) -> str:
    """The id of the trusted key whose signature ``signature`` (``manifest.sig``'s bytes, None when absent) is over
    ``manifest_bytes``; else SignatureError, one line naming ``where`` and what is wrong."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    pinned = ", ".join(k.key_id for k in trusted)
    if signature is None:
        raise SignatureError(f"{where}: unsigned (no {SIGNATURE}); this server trusts only exports signed by {pinned}")
    try:
        if len(signature) > MAX_SIGNATURE_BYTES:
            raise ValueError("too large")
        doc = json.loads(signature)
        sig = base64.b64decode(doc["signature"], validate=True)
        claimed = str(doc.get("key_id", ""))
        if doc.get("algorithm") != "ed25519" or len(sig) != 64:
            raise ValueError("not an ed25519 signature")
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise SignatureError(f"{where}: {SIGNATURE} is not a signature file") from None
    for k in trusted:  # every pinned key is tried: the claimed id is a hint for the message, not trusted
        try:
            Ed25519PublicKey.from_public_bytes(k.raw).verify(sig, DOMAIN + manifest_bytes)
            return k.key_id
        except InvalidSignature:
            continue
    known = any(k.key_id == claimed for k in trusted)
    why = "does not match the manifest (edited after signing)" if known else f"is by key {claimed[:16]!r}, not trusted"
    raise SignatureError(f"{where}: the signature {why}; trusted keys: {pinned}")


def verify_snapshot_signature(directory: Path, trusted: Sequence[TrustedKey]) -> str:
    """``verify_manifest_signature`` for a local snapshot directory (``manifest.json`` and ``manifest.sig``)."""
    sig_path = directory / SIGNATURE
    try:
        signature = sig_path.read_bytes() if sig_path.is_file() and not sig_path.is_symlink() else None
        manifest = (directory / MANIFEST).read_bytes()
    except OSError as e:
        raise SignatureError(f"{directory}: cannot read the manifest or its signature ({e.strerror})") from None
    return verify_manifest_signature(manifest, signature, trusted, f"snapshot {directory.name}")


def signed_by_trusted(directory: Path, trusted_keys: Sequence[str | Path | TrustedKey]) -> str:
    """``Index.open(trusted_keys=...)``: key files or loaded keys; the id of the one that signed ``directory``."""
    keys = [k for k in trusted_keys if isinstance(k, TrustedKey)]
    keys += load_trusted_keys([k for k in trusted_keys if not isinstance(k, TrustedKey)])
    if not keys:
        raise SignatureError(f"{directory}: trusted_keys is empty; give at least one public key")
    return verify_snapshot_signature(directory, keys)
