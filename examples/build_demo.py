"""Build the demo corpus: three small local git repositories with backdated, deterministic history.

Usage:  python examples/build_demo.py OUT_DIR

Creates OUT_DIR/repos/<name> for each repository described under examples/demo/<name>/ and copies the
operator configuration (sources.toml, identities.toml, verifications.toml, policy.toml and components.toml
when present) into OUT_DIR, so that OUT_DIR/sources.toml resolves its relative ``url = "repos/<name>"`` paths.

Each repository is described by two things kept in examples/demo/<name>/:

* ``tree/``: file contents at HEAD, before the footer (see below) is appended.
* ``history.toml``: the commits, in order. A commit names its author (a key of ``[people]``), a
  timezone-aware ``date``, a ``message`` (trailers included), the files it writes and deletes, and
  optionally a ``branch``, a ``merge`` (the branch merged into ``main``; the commit gets two parents), a
  ``committer``/``commit_date``, a lightweight ``tag`` and ``sign = "platform"``: the commit is signed, as
  a forge signs the merges it performs, with the demo platform's SSH key (examples/demo/keys/; the
  operator lists its public half as a ``[[platform]]`` in identities.toml).

A ``files`` entry is a path (written from ``tree/<path>``), ``"dest=src"`` (``tree/<src>`` written at
``dest``, for byte-identical copies such as versioned docs), or a table ``{path, src, sub, cut, ws}``
that derives an *earlier* version from the HEAD content: ``sub`` is a list of [old, new] replacements
(each must match, so a drifting spec fails loudly), ``cut`` keeps the text before a marker, and
``ws = true`` adds a trailing space to every non-blank body line (a whitespace-only difference).

An optional ``[footer]`` table appends a licence line in a comment to every file matching its globs;
the text switches from ``before`` to ``after`` at commit ``switch``, which therefore touches every such
file: the bulk commit that freshness scoring must see through (DESIGN.md, "Known traps").

Determinism: a commit SHA is a function of its tree, parents, author, committer, dates with their
offsets and message; all of these come from the spec, so every build gives the same SHAs (an ed25519
SSH signature has no timestamp and no random nonce, so a signed commit is deterministic too). Pure stdlib
plus GitPython, and ssh-keygen for signing; no git command touches anything outside OUT_DIR.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import git
from gitdb.base import IStream

EXAMPLES_DIR = Path(__file__).resolve().parent
DEMO_DIR = EXAMPLES_DIR / "demo"
REPOS = ("midnight-docs", "partner-sdk", "community-contracts")
SIGNING_KEYS = {"platform": DEMO_DIR / "keys" / "platform_ed25519"}  # demo-only keys, published on purpose
CONFIG_FILES = ("sources.toml", "identities.toml", "verifications.toml", "policy.toml", "components.toml")
# Latest date any demo commit may carry (the brief: history in 2024-2026, nothing after 2026-11-01).
LATEST_DATE = datetime.fromisoformat("2026-11-01T00:00:00+00:00")

_PERSON = re.compile(r"^\s*(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>\s*$")
_COMMENT_STYLES = {".md": "<!-- {} -->", ".mdx": "{{/* {} */}}", ".js": "// {}"}


class DemoSpecError(ValueError):
    """The history spec of a demo repository is inconsistent; the message names repo, commit and key."""


@dataclass
class _Branch:
    head: git.Commit | None
    tree: dict[str, bytes]  # raw contents, before the footer is applied
    base: dict[str, bytes] = field(default_factory=dict)  # main's tree where the branch forked
    rendered: dict[str, bytes] = field(default_factory=dict)  # what the head commit holds


def load_history(name: str) -> dict:
    """Parse examples/demo/<name>/history.toml (tomllib turns offset datetimes into aware datetimes)."""
    path = DEMO_DIR / name / "history.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise DemoSpecError(f"{path}: {e}") from None


def _actor(spec: dict, key: str, where: str) -> git.Actor:
    people = spec.get("people", {})
    if key not in people:
        raise DemoSpecError(f"{where}: unknown person key {key!r} (not in [people])")
    m = _PERSON.match(people[key])
    if not m:
        raise DemoSpecError(f"{where}: person {key!r} must look like 'Name <email>', got {people[key]!r}")
    return git.Actor(m["name"], m["email"])


def _aware(value: object, where: str) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise DemoSpecError(f"{where}: expected an offset datetime such as 2024-05-01T10:00:00+02:00, got {value!r}")
    if value > LATEST_DATE:
        raise DemoSpecError(f"{where}: {value.isoformat()} is after {LATEST_DATE.isoformat()}")
    return value


def _read_tree_file(name: str, rel: str, where: str) -> str:
    path = DEMO_DIR / name / "tree" / rel
    if not path.is_file():
        raise DemoSpecError(f"{where}: no kept file tree/{rel}")
    return path.read_text(encoding="utf-8")


def _derive(name: str, entry: object, where: str) -> tuple[str, str]:
    """Return (destination path, raw content) for one ``files`` entry of a commit."""
    if isinstance(entry, str):
        dest, _, src = entry.partition("=")
        return dest, _read_tree_file(name, src or dest, where)
    if not isinstance(entry, dict) or "path" not in entry:
        raise DemoSpecError(f"{where}: a files entry must be a path or a table with 'path', got {entry!r}")
    unknown = set(entry) - {"path", "src", "sub", "cut", "ws"}
    if unknown:
        raise DemoSpecError(f"{where}: unknown keys {sorted(unknown)} in files entry {entry['path']!r}")
    dest = entry["path"]
    text = _read_tree_file(name, entry.get("src", dest), where)
    for old, new in entry.get("sub", []):
        if old not in text:
            raise DemoSpecError(f"{where}: sub {old!r} does not occur in {dest}")
        text = text.replace(old, new)
    if "cut" in entry:
        if entry["cut"] not in text:
            raise DemoSpecError(f"{where}: cut marker {entry['cut']!r} does not occur in {dest}")
        text = text.split(entry["cut"], 1)[0].rstrip() + "\n"
    if entry.get("ws"):  # trailing spaces on body lines; front matter fences must stay exact
        head, body = "", text
        if text.startswith("---\n") and "\n---\n" in text[3:]:
            end = text.index("\n---\n", 3) + 5
            head, body = text[:end], text[end:]
        text = head + "".join(
            line[:-1] + " \n" if line.strip() and line.endswith("\n") else line
            for line in body.splitlines(keepends=True)
        )
    return dest, text


def _render(footer: dict | None, switched: bool, path: str, raw: str) -> bytes:
    """Append the licence footer in the comment style of the file's extension."""
    # fnmatch's "*" crosses "/", so "**/*.md" matches nested files; strip "**/" for top-level ones.
    if footer and any(
        fnmatch.fnmatch(path, g) or fnmatch.fnmatch(path, g.removeprefix("**/")) for g in footer["globs"]
    ):
        style = _COMMENT_STYLES[os.path.splitext(path)[1]]
        raw = raw.rstrip("\n") + "\n\n" + style.format(footer["after" if switched else "before"]) + "\n"
    return raw.encode("utf-8")


def _three_way(base: dict, ours: dict, theirs: dict, where: str) -> dict:
    """Merge two trees against their fork point; a path changed differently on both sides is an error."""
    out = {}
    for p in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(p), ours.get(p), theirs.get(p)
        if t == b or o == t:
            v = o
        elif o == b:
            v = t
        else:
            raise DemoSpecError(f"{where}: merge conflict on {p}")
        if v is not None:
            out[p] = v
    return out


def _sync_worktree(root: Path, old: dict[str, bytes], new: dict[str, bytes]) -> None:
    for p in old.keys() - new.keys():
        (root / p).unlink()
    for p, data in new.items():
        if old.get(p) != data:
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_bytes(data)


def _signed(repo: git.Repo, commit: git.Commit, key: Path, where: str) -> git.Commit:
    """The same commit with an SSH signature header, as ``git commit -S`` with gpg.format=ssh writes it."""
    raw = repo.odb.stream(commit.binsha).read()
    with tempfile.TemporaryDirectory() as tmp:
        private = Path(tmp) / "key"
        shutil.copyfile(key, private)
        private.chmod(0o600)  # ssh-keygen refuses a private key others can read
        try:
            sig = subprocess.run(
                ["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(private)],
                input=raw,
                capture_output=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise DemoSpecError(f"{where}: cannot sign with {key.name} (ssh-keygen): {e}") from None
    head, sep, message = raw.partition(b"\n\n")
    data = head + b"\ngpgsig " + b"\n ".join(sig.rstrip(b"\n").split(b"\n")) + sep + message
    stored = repo.odb.store(IStream(b"commit", len(data), io.BytesIO(data)))
    return git.Commit(repo, stored.binsha)


def build_repo(name: str, dest: Path) -> dict[str, str]:
    """Build one demo repository at ``dest`` (removed first) and return {spec commit id: SHA}."""
    spec = load_history(name)
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    repo = git.Repo.init(dest)
    with repo.config_writer() as cw:  # keep later git reads of this repo independent of user config
        cw.set_value("core", "autocrlf", "false")
    footer = spec.get("footer")
    if footer and not {"globs", "before", "after", "switch"} <= footer.keys():
        raise DemoSpecError(f"{name}: [footer] needs globs, before, after and switch")
    switched = False
    branches: dict[str, _Branch] = {"main": _Branch(None, {})}
    worktree: dict[str, bytes] = {}  # invariant: the index and the working tree hold exactly this
    index = repo.index
    shas: dict[str, str] = {}
    tags: dict[str, git.Commit] = {}
    for i, c in enumerate(spec.get("commit", [])):
        cid = c.get("id", f"#{i}")
        where = f"{name}: commit {cid}"
        if cid in shas:
            raise DemoSpecError(f"{where}: duplicate commit id")
        author = _actor(spec, c.get("author", ""), where)
        committer = _actor(spec, c.get("committer", c.get("author", "")), where)
        adate = _aware(c.get("date"), f"{where}.date")
        cdate = _aware(c.get("commit_date", adate), f"{where}.commit_date")
        if "message" not in c or not c["message"].strip():
            raise DemoSpecError(f"{where}: missing message")
        bname = c.get("branch", "main")
        if bname not in branches:
            main = branches["main"]
            branches[bname] = _Branch(main.head, dict(main.tree), dict(main.tree))
        br = branches[bname]
        tree = dict(br.tree)
        parents = [br.head] if br.head is not None else []
        if "merge" in c:
            other = branches.pop(c["merge"], None)
            if other is None or c["merge"] == "main":
                raise DemoSpecError(f"{where}: merge names unknown or unmergeable branch {c['merge']!r}")
            tree = _three_way(other.base, tree, other.tree, where)
            parents.append(other.head)
        if footer and cid == footer["switch"]:
            switched = True
        for p in c.get("delete", []):
            if tree.pop(p, None) is None:
                raise DemoSpecError(f"{where}: deletes {p}, which is not in the tree")
        for entry in c.get("files", []):
            p, text = _derive(name, entry, where)
            tree[p] = text.encode("utf-8")
        rendered = {p: _render(footer, switched, p, raw.decode("utf-8")) for p, raw in tree.items()}
        if parents and "merge" not in c and rendered == br.rendered:
            raise DemoSpecError(f"{where}: changes nothing")
        # Update only what differs: each stored blob costs file system round trips.
        removed = sorted(worktree.keys() - rendered.keys())
        changed = sorted(p for p in rendered if worktree.get(p) != rendered[p])
        _sync_worktree(dest, worktree, rendered)
        if removed:
            index.remove(removed, working_tree=False)
        if changed:
            index.add(changed)
        worktree = rendered
        commit = index.commit(
            c["message"].strip() + "\n",
            parent_commits=parents,
            head=False,
            author=author,
            committer=committer,
            author_date=adate,
            commit_date=cdate,
            skip_hooks=True,
        )
        if "sign" in c:
            if c["sign"] not in SIGNING_KEYS:
                raise DemoSpecError(f"{where}: sign names unknown key {c['sign']!r} (known: {', '.join(SIGNING_KEYS)})")
            commit = _signed(repo, commit, SIGNING_KEYS[c["sign"]], where)
        br.head, br.tree, br.rendered = commit, tree, rendered
        shas[cid] = commit.hexsha
        if "tag" in c:
            tags[c["tag"]] = commit
    main = branches["main"]
    if main.head is None:
        raise DemoSpecError(f"{name}: history has no commit on main")
    repo.create_head("main", main.head, force=True)
    repo.head.reference = repo.heads.main  # HEAD -> refs/heads/main, whatever init.defaultBranch says
    for bname, br in branches.items():  # branches never merged stay as refs
        if bname != "main" and br.head is not None:
            repo.create_head(bname, br.head)
    for tname, commit in tags.items():
        repo.create_tag(tname, ref=commit)  # lightweight: no tagger date, so deterministic
    # Leave a clean checkout of main (the last commit built may have been on another branch).
    _sync_worktree(dest, worktree, main.rendered)
    repo.head.reset(main.head, index=True, working_tree=True)
    return shas


def build_demo(out_dir: Path) -> Path:
    """Build every demo repository under OUT_DIR/repos, copy the configuration; return OUT_DIR/sources.toml."""
    out_dir = Path(out_dir)
    (out_dir / "repos").mkdir(parents=True, exist_ok=True)
    for name in REPOS:
        build_repo(name, out_dir / "repos" / name)
    for fname in CONFIG_FILES:
        src = EXAMPLES_DIR / fname
        if src.is_file():
            shutil.copyfile(src, out_dir / fname)
    return out_dir / "sources.toml"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python examples/build_demo.py OUT_DIR", file=sys.stderr)
        return 2
    try:
        sources = build_demo(Path(argv[0]))
    except DemoSpecError as e:
        print(f"build_demo: {e}", file=sys.stderr)
        return 1
    print(sources)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
