"""Signed commits written byte for byte, for hostile-repository tests of signature evidence.

A commit is signed as git signs it: the signature covers the commit object without its ``gpgsig``
header, and is inserted as that header after the committer line.  Signers are real keys: ed25519 SSH
keys from ssh-keygen and OpenPGP keys from gpg, each in its own home directory.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.kits.rawrepo import GIT_ENV, RawRepo

# The identities the signature tests share: a foundation and a community publisher, and Ada of the foundation
# (each test appends her keys and its own people).
IDENTITIES = """
[[publisher]]
id = "mf"
name = "Midnight Foundation"
tier = "foundation"

[[publisher]]
id = "com"
name = "Night Owls Community"
tier = "community"

[[person]]
name = "Ada Lovelace"
emails = ["ada@mf.example"]
publisher = "mf"
"""


class SshKey:
    def __init__(self, directory: Path, name: str):
        self.path = Path(directory) / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(self.path)], check=True)
        self.public = self.path.with_suffix(".pub").read_text().strip()

    def sign(self, payload: bytes) -> bytes:
        return subprocess.run(
            ["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(self.path)],
            input=payload,
            capture_output=True,
            check=True,
        ).stdout


def signed_body(body: bytes, signature: bytes) -> bytes:
    """Insert ``gpgsig`` after the headers' committer line (continuation lines start with a space)."""
    head, sep, message = body.partition(b"\n\n")
    lines = signature.rstrip(b"\n").split(b"\n")
    header = b"gpgsig " + b"\n ".join(lines)
    return head + b"\n" + header + sep + message


class SignedRepo(RawRepo):
    def signed_commit(
        self,
        files: dict[str, str],
        message: str,
        author: str,
        when: int,
        committer: str | None = None,
        parents: list[str] | None = None,
        sign=None,
        ref: str = "refs/heads/main",
        tamper=None,
    ) -> str:
        """A commit of exactly ``files`` (the whole tree), signed by ``sign(payload) -> signature`` if given;
        ``tamper(object) -> object`` edits it after signing (what a forger can push)."""
        tree = self.tree([(0o100644, p, c) for p, c in files.items()])
        if parents is None:
            head = self.git("rev-parse", "--verify", "-q", ref).strip() if self._has_ref(ref) else b""
            parents = [head.decode()] if head else []
        stamp = f"{when} +0000".encode()
        body = b"tree " + tree.encode() + b"\n" + b"".join(b"parent " + p.encode() + b"\n" for p in parents)
        body += b"author " + author.encode() + b" " + stamp + b"\n"
        body += b"committer " + (committer or author).encode() + b" " + stamp + b"\n\n" + message.encode() + b"\n"
        if sign is not None:
            body = signed_body(body, sign(body))
        if tamper is not None:
            body = tamper(body)
        sha = self._object("commit", body)
        self.git("update-ref", ref, sha)
        return sha

    def signed_tag(self, name: str, target: str, tagger: str, when: int, sign) -> str:
        """An annotated tag whose signature follows its message, as git writes one."""
        body = f"object {target}\ntype commit\ntag {name}\ntagger {tagger} {when} +0000\n\nrelease {name}\n".encode()
        sha = self._object("tag", body + sign(body))
        self.git("update-ref", f"refs/tags/{name}", sha)
        return sha

    def _has_ref(self, ref: str) -> bool:
        env = dict(os.environ, **GIT_ENV)
        return subprocess.run(["git", "rev-parse", "--verify", "-q", ref], cwd=self.path, env=env).returncode == 0


class GpgHome:
    """A signer's GnuPG home with passphrase-less keys (its agent is stopped by ``close``)."""

    def __init__(self, directory: Path):
        self.home = Path(directory)
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)

    def gpg(self, *args: str, data: bytes | None = None) -> bytes:
        cmd = ["gpg", "--homedir", str(self.home), "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
        return subprocess.run([*cmd, *args], input=data, capture_output=True, check=True).stdout

    def new_key(self, uid: str, expire: str = "0") -> GpgKey:
        self.gpg("--quick-gen-key", uid, "ed25519", "sign", expire)
        out = self.gpg("--with-colons", "--list-keys", uid).decode()
        fpr = [ln.split(":")[9] for ln in out.splitlines() if ln.startswith("fpr:")][0]
        return GpgKey(self, fpr)

    def close(self) -> None:
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "gpg-agent"], check=False)


class GpgKey:
    def __init__(self, home: GpgHome, fpr: str):
        self.home, self.fpr = home, fpr

    @property
    def public(self) -> str:
        return self.home.gpg("--armor", "--export", self.fpr).decode()

    @property
    def revocation(self) -> str:
        """The revocation certificate gpg wrote at key generation, made importable (its guard colon removed)."""
        text = (self.home.home / "openpgp-revocs.d" / f"{self.fpr}.rev").read_text()
        return text.replace(":-----BEGIN PGP PUBLIC KEY BLOCK-----", "-----BEGIN PGP PUBLIC KEY BLOCK-----")

    def sign(self, payload: bytes) -> bytes:
        return self.home.gpg("--local-user", self.fpr, "--detach-sign", "--armor", data=payload)


ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "0"}


def run(cwd: Path, *args: str, when: int = 0, stdin: bytes | None = None) -> str:
    env = dict(ENV)
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    out = subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, check=True)
    return out.stdout.decode().strip()


def keygen(tmp: Path, name: str) -> tuple[Path, str]:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(tmp / name)], check=True)
    return tmp / name, (tmp / f"{name}.pub").read_text().strip()
