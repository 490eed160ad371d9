"""Hostile repositories built from git plumbing (``RawRepo``): what a hostile remote can serve but a porcelain
refuses, the hostile repository every odd tree entry of which the ingest tests check, and ``ingest`` (one source
through crawl and ingest). Used by the ingest tests and the signature kit."""

from __future__ import annotations

import os
import subprocess
from itertools import pairwise
from pathlib import Path

from trustindex.crawl.git import decode_path
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.schemas.config import Identities, Publisher, Source
from trustindex.schemas.policy import Policy

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_COUNT": "0",
    "GIT_AUTHOR_NAME": "Eve",
    "GIT_AUTHOR_EMAIL": "eve@evil.example",
    "GIT_COMMITTER_NAME": "Eve",
    "GIT_COMMITTER_EMAIL": "eve@evil.example",
}


CAP = 200_000  # the policy's ingest.max_file_bytes in these tests (small, so "too large" stays cheap)


POLICY = Policy.from_dict({"ingest": {"max_file_bytes": CAP}})


IDS = Identities(publishers={"p": Publisher("p", "Test Publisher", "community")})


SECRET = "OUTSIDE-SECRET-7f3a9c"  # lives outside every repository; must never reach a table


class RawRepo:
    """A repository written with plumbing: trees and commits hold exactly the bytes given."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, input: bytes | None = None, date: str = "2025-01-06T09:30:00+00:00") -> bytes:
        env = dict(os.environ, **GIT_ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        return subprocess.run(
            ["git", *args], cwd=self.path, input=input, capture_output=True, check=True, env=env
        ).stdout

    def blob(self, data: bytes) -> str:
        return self.git("hash-object", "-w", "--stdin", input=data).decode().strip()

    def _object(self, kind: str, body: bytes) -> str:
        # --literally: write what fsck would reject (duplicate names, ".git" entries, bad dates)
        return self.git("hash-object", "-t", kind, "-w", "--stdin", "--literally", input=body).decode().strip()

    def tree(self, entries: list[tuple[int, bytes | str, bytes | str]]) -> str:
        """``entries``: (mode, path, content) with blob bytes, a symlink target, or a gitlink's commit id.

        A list, not a dict, so that a test can give one name twice.
        """
        nested: dict = {}
        for mode, path, content in entries:
            parts = (path if isinstance(path, bytes) else path.encode()).split(b"/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node.setdefault(None, []).append((mode, parts[-1], content))
        return self._write_tree(nested)

    def _write_tree(self, node: dict) -> str:
        rows = []
        for name, sub in node.items():
            if name is not None:
                rows.append((name + b"/", b"40000 " + name, self._write_tree(sub)))
        for mode, name, content in node.get(None, []):
            sha = (
                content if mode == 0o160000 else self.blob(content if isinstance(content, bytes) else content.encode())
            )
            rows.append((name, f"{mode:o} ".encode() + name, sha))
        rows.sort(key=lambda r: r[0])  # git's order: a subtree sorts as "name/"
        return self._object("tree", b"".join(head + b"\0" + bytes.fromhex(sha) for _k, head, sha in rows))

    def commit(
        self,
        entries,
        message: str = "commit",
        author: str | bytes = "Eve <eve@evil.example>",
        when: int = 1736155800,
        committer: str | None = None,
        parents: list[str] | None = None,
        author_date: bytes | None = None,
        committer_date: bytes | None = None,
        raw_message: bytes | None = None,
    ) -> str:
        """A commit object written byte for byte, so a date header or a name can be anything."""
        tree = self.tree(entries)
        if parents is None:
            head = self.git("rev-parse", "--verify", "-q", "refs/heads/main").strip() if self._has_head() else b""
            parents = [head.decode()] if head else []
        adate = author_date if author_date is not None else f"{when} +0000".encode()
        cdate = committer_date if committer_date is not None else f"{when} +0000".encode()
        body = b"tree " + tree.encode() + b"\n" + b"".join(b"parent " + p.encode() + b"\n" for p in parents)
        author = author if isinstance(author, bytes) else author.encode()
        committer = committer.encode() if committer else author
        body += b"author " + author + b" " + adate + b"\n" + b"committer " + committer + b" " + cdate + b"\n\n"
        body += raw_message if raw_message is not None else message.encode() + b"\n"
        sha = self._object("commit", body)
        self.git("update-ref", "refs/heads/main", sha)
        return sha

    def _has_head(self) -> bool:
        return (
            subprocess.run(
                ["git", "rev-parse", "--verify", "-q", "refs/heads/main"],
                cwd=self.path,
                capture_output=True,
                env=dict(os.environ, **GIT_ENV),
            ).returncode
            == 0
        )

    def paths(self, commit: str) -> list[str]:
        """``git ls-tree -r`` at the commit, names decoded as crawl.git names them."""
        out = self.git("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
        return [decode_path(p)[0] for p in out.split(b"\0") if p]


def ingest(
    repo: Path | str,
    data_dir: Path,
    name: str = "h",
    ref: str = "main",
    include=("**/*",),
    exclude=(),
    policy: Policy = POLICY,
    ids: Identities = IDS,
    ledger=(),
    **kw,
):
    src = Source(name, str(repo), ref, "p", include=tuple(include), exclude=tuple(exclude))
    return ingest_source(src, Path(data_dir), ids, list(ledger), policy, approx_token_count, IngestRun(**kw))


LFS = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 123456\n"


DEEP = {
    "deep/nested-quotes.md": ("> " * 3000 + "deep\n").encode(),
    "deep/nested-lists.md": "".join("  " * i + "- item\n" for i in range(400)).encode(),
    "deep/brackets.md": ("[" * 30000 + "\n" + "*a _b " * 10000 + "\n" + "<div>" * 5000 + "\n").encode(),
    "deep/fences.md": ("```\n" * 2001 + "~~~~\n" * 1000).encode(),
    "deep/one-long-line.md": b"x" * 150_000,
    "deep/parens.ts": (
        "const x = " + "(" * 5000 + "1" + ")" * 5000 + ";\n" + "function f() {" * 2000 + "}" * 2000 + "\n"
    ).encode(),
    "deep/arrays.rs": (
        "fn main() { let x = " + "[" * 5000 + "]" * 5000 + "; }\n" + "mod m {" * 2000 + "}" * 2000 + "\n"
    ).encode(),
    "deep/blocks.compact": (
        "pragma language_version >= 0.16;\nexport circuit f(): [] { " + "{" * 5000 + "}" * 5000 + " }\n"
    ).encode(),
}


BILLION_LAUGHS = (
    "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in pairwise("abcdefghi"))
    + "---\n# Bomb\n\ntext\n"
).encode()


# (case id, mode, path, content, expected status, expected rule or stage, fragment of the reason)
CASES = [
    ("symlink_dotai_to_etc", 0o120000, ".ai", "/etc", "skipped", "symlink", ""),
    ("symlink_relative_outside", 0o120000, "docs/link.md", "../../secret.md", "skipped", "symlink", ""),
    ("symlink_absolute_outside", 0o120000, "docs/abs.md", "{secret}", "skipped", "symlink", ""),
    ("submodule_gitlink", 0o160000, "vendor/evil", "{submodule}", "skipped", "submodule", ""),
    (
        "gitmodules_is_only_data",
        0o100644,
        ".gitmodules",
        '[submodule "evil"]\n\tpath = vendor/evil\n\turl = {submodule_url}\n',
        "ingested",
        "",
        "",
    ),
    ("lfs_pointer_binary", 0o100644, "assets/model.bin", LFS, "skipped", "lfs_pointer", ""),
    ("lfs_pointer_markdown", 0o100644, "docs/video.md", LFS, "skipped", "lfs_pointer", ""),
    (
        "binary_png",
        0o100644,
        "img/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)),
        "skipped",
        "binary",
        "",
    ),
    (
        "over_size_cap",
        0o100644,
        "docs/huge.md",
        b"# Huge\n\n" + b"w" * (CAP - 7),
        "skipped",
        f"too_large:{CAP + 1}>{CAP}",
        "",
    ),
    (
        "invalid_utf8_markdown",
        0o100644,
        "docs/latin1.md",
        b"# Caf\xe9\n",
        "failed",
        "extract",
        "invalid UTF-8 at byte offset 5",
    ),
    (
        "invalid_utf8_code",
        0o100644,
        "src/bad.ts",
        b"const s = '\xff';\n",
        "failed",
        "extract",
        "invalid UTF-8 at byte offset 11",
    ),
    (
        "nul_byte_markdown",
        0o100644,
        "docs/nul.md",
        b"# Title\n\nab\0cd\n",
        "failed",
        "extract",
        "NUL byte at byte offset 11",
    ),
    ("nul_byte_code", 0o100644, "src/nul.rs", b"fn main() {}\0\n", "failed", "extract", "NUL byte at byte offset 12"),
    (
        "nul_byte_past_sniff_window",
        0o100644,
        "docs/nul-late.md",
        b"# T\n\n" + b"a" * 9000 + b"\0\n",
        "failed",
        "extract",
        "NUL byte at byte offset 9005",
    ),
    (
        "malformed_package_json",
        0o100644,
        "package.json",
        b'{"name": "x", "dependencies": {',
        "failed",
        "manifest",
        "invalid JSON",
    ),
    (
        "malformed_cargo_toml",
        0o100644,
        "crates/x/Cargo.toml",
        b'[package\nname = "x"',
        "failed",
        "manifest",
        "invalid TOML",
    ),
    (
        "malformed_front_matter",
        0o100644,
        "docs/fm.md",
        b"---\ntitle: [unclosed\n---\n# Body\n\ntext\n",
        "ingested",
        "",
        "front matter YAML is malformed",
    ),
    ("front_matter_alias_bomb", 0o100644, "docs/bomb.md", BILLION_LAUGHS, "ingested", "", "front matter"),
    (
        "docmeta_terminal_output",
        0o100644,
        ".docmeta.json",
        b"\x1b[31mError: command not found\x1b[0m\n",
        "ingested",
        "",
        "",
    ),
    ("path_with_space", 0o100644, "docs/with space.md", b"# Space\n", "ingested", "", ""),
    ("path_with_newline", 0o100644, "docs/new\nline.md", b"# Newline\n", "ingested", "", ""),
    ("path_with_quotes", 0o100644, "docs/quo\"te's.md", b"# Quotes\n", "ingested", "", ""),
    ("path_with_tab_and_backslash", 0o100644, "docs/tab\there\\x.md", b"# Tab\n", "ingested", "", ""),
    ("path_leading_dash", 0o100644, "--upload-pack=touch PWNED.md", b"# Dash\n", "ingested", "", ""),
    ("path_non_ascii", 0o100644, "docs/déjà vu/日本語.md", b"# Unicode\n", "ingested", "", ""),
    ("path_not_utf8", 0o100644, b"docs/caf\xe9.md", b"# Latin-1 name\n", "skipped", "non_utf8_path", ""),
    (
        "tree_entry_dotgit_hook",
        0o100755,
        ".git/hooks/post-checkout",
        b"#!/bin/sh\ntouch /tmp/PWNED\n",
        "skipped",
        "unsafe_path",
        "",
    ),
    (
        "tree_entry_dotgit_uppercase",
        0o100644,
        ".GIT/config",
        b"[core]\n\tfsmonitor = touch /tmp/PWNED\n",
        "skipped",
        "unsafe_path",
        "",
    ),
    ("tree_entry_dotdot", 0o100644, "../escape.md", b"# Escape\n", "skipped", "unsafe_path", ""),
    ("executable_markdown", 0o100755, "docs/run.md", b"#!/bin/sh\n# not run\n", "ingested", "", ""),
    ("empty_markdown", 0o100644, "docs/empty.md", b"", "ingested", "", ""),
] + [(f"pathological_{Path(p).name}", 0o100644, p, d, "ingested", "", "") for p, d in DEEP.items()]


DUPLICATE = "docs/dup.md"  # the tree lists it twice: one row, rule duplicate_path


def build_hostile_repo(tmp: Path) -> tuple[RawRepo, str]:
    """One repository holding every case (and a duplicate tree entry); returns it and its head."""
    (tmp / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    inner = RawRepo(tmp / "inner")  # what the submodule would point at
    inner_head = inner.commit([(0o100644, "README.md", f"# Inner\n\n{SECRET}\n")])
    repo = RawRepo(tmp / "repo")
    fill = {"{secret}": str(tmp / "secret.md"), "{submodule}": inner_head, "{submodule_url}": str(inner.path)}
    entries = []
    for _cid, mode, path, content, *_ in CASES:
        if isinstance(content, str):
            for k, v in fill.items():
                content = content.replace(k, v)
        entries.append((mode, path, content))
    entries += [(0o100644, DUPLICATE, b"# First\n"), (0o100644, DUPLICATE, b"# Second claims trust\n")]
    return repo, repo.commit(entries, message="hostile tree")
