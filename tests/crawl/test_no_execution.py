"""Nothing from a repository, or from the operator's git configuration, runs during a crawl.

Every execution vector git has is armed with a script that leaves a marker
file: filter drivers (smudge/clean/process) named by a crawled
``.gitattributes``, ``textconv``/``diff.external``, every hook (in the
source's ``.git/hooks``, and through ``core.hooksPath``), ``core.fsmonitor``,
``core.sshCommand``, ``core.pager``, ``credential.helper``, ``core.askPass``
and ``uploadpack.packObjectsHook``, from the source repository's own config and
from global-style configuration (``~/.gitconfig``, ``$XDG_CONFIG_HOME/git/config``,
``GIT_CONFIG_SYSTEM``, ``GIT_CONFIG_COUNT``, ``GIT_CONFIG_PARAMETERS``).  A
control proves the traps fire under a plain git; then mirroring, fetching,
reading blobs and history, and a whole ``ingest_source`` must leave no marker,
and the blobs read are the raw bytes, not a smudged checkout.  Rules under
test: crawl/git.py (SAFE_ENV, SAFE_OPTS, bare mirrors, empty clone template).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import git
import pytest

from trustindex.crawl.git import (
    SAFE_ENV,
    SourceError,
    _git,
    ensure_mirror,
    list_tree,
    mirror_path,
    read_blob,
    resolve_ref,
)
from trustindex.crawl.history import read_log
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.schemas.config import Identities, Publisher, Source
from trustindex.schemas.policy import Policy

HOOKS = (
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-merge",
    "post-rewrite",
    "reference-transaction",
    "pre-receive",
    "post-receive",
    "update",
    "post-update",
    "push-to-checkout",
    "pre-auto-gc",
    "fsmonitor-watchman",
    "p4-pre-submit",
    "sendemail-validate",
)
RAW = b"# Guide\n\nRAW-BYTES-IN-THE-BLOB\n"
CLEAN_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_COUNT": "0",
    "GIT_AUTHOR_NAME": "Eve",
    "GIT_AUTHOR_EMAIL": "eve@evil.example",
    "GIT_COMMITTER_NAME": "Eve",
    "GIT_COMMITTER_EMAIL": "eve@evil.example",
}


def _script(bin_dir: Path, markers: Path, name: str, body: str = "", file: str | None = None) -> str:
    """An executable ``file`` (default: ``name``) that leaves ``markers/name``, then runs ``body``."""
    p = bin_dir / (file or name)
    p.write_text(f"#!/bin/sh\ntouch '{markers}/{name}'\n{body}\n")
    p.chmod(0o755)
    return str(p)


def _evil_config(bin_dir: Path, markers: Path, tag: str) -> str:
    """A git config that arms every execution vector; each script's marker names its origin ``tag``."""
    s = lambda vector, body="": _script(bin_dir, markers, f"{tag}-{vector}", body)  # noqa: E731
    hooks = bin_dir / f"{tag}-hooks"
    hooks.mkdir()
    for h in HOOKS:
        _script(hooks, markers, f"{tag}-hook-{h}", file=h)
    smudge = s("smudge", "sed s/RAW-BYTES/SMUDGED-BYTES/")
    return f"""[core]
\thooksPath = {hooks}
\tfsmonitor = {s("fsmonitor")}
\tsshCommand = {s("ssh")}
\tpager = {s("pager", "cat")}
\taskPass = {s("askpass")}
[credential]
\thelper = !{s("credential")}
[uploadpack]
\tpackObjectsHook = {s("packobjects", 'exec "$@"')}
[filter "evil"]
\tsmudge = {smudge}
\tclean = {s("clean", "cat")}
\trequired = true
[filter "evilproc"]
\tprocess = {s("process")}
[diff "evil"]
\ttextconv = {s("textconv", "cat")}
[diff]
\texternal = {s("diffexternal")}
[protocol "ext"]
\tallow = always
"""


@pytest.fixture
def armed(tmp_path, monkeypatch):
    """A source repository and a process environment with every trap set; yields the markers folder."""
    markers, bin_dir = tmp_path / "markers", tmp_path / "bin"
    markers.mkdir()
    bin_dir.mkdir()
    src = tmp_path / "src"
    base = dict(os.environ, **CLEAN_ENV)

    def run(*args, input=None, env=None):
        return subprocess.run(
            ["git", *args], cwd=src, env=dict(base, **(env or {})), input=input, check=True, capture_output=True
        )

    src.mkdir()
    run("init", "-q", "-b", "main")
    (src / ".gitattributes").write_text("*.md filter=evil diff=evil\n*.txt filter=evilproc\n")
    (src / ".gitmodules").write_text(f'[submodule "x"]\n\tpath = x\n\turl = ext::sh -c touch% {markers}/ext\n')
    (src / "guide.md").write_bytes(RAW)
    (src / "notes.txt").write_bytes(b"notes\n")
    run("add", ".")
    run("commit", "-q", "-m", "first")
    # Armed after our own commit, so that only the crawl can trigger them.
    with open(src / ".git" / "config", "a") as f:
        f.write(_evil_config(bin_dir, markers, "repo"))
    for h in HOOKS:
        _script(src / ".git" / "hooks", markers, f"repo-hook-{h}", file=h)
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    home.mkdir()
    (home / ".gitconfig").write_text(_evil_config(bin_dir, markers, "global"))
    (xdg / "git" / "config").write_text(_evil_config(bin_dir, markers, "xdg"))
    (tmp_path / "system.gitconfig").write_text(_evil_config(bin_dir, markers, "system"))
    for k, v in {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(xdg),
        "GIT_CONFIG_SYSTEM": str(tmp_path / "system.gitconfig"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": _script(bin_dir, markers, "envcount-fsmonitor"),
        "GIT_CONFIG_PARAMETERS": f"'core.sshcommand'='{_script(bin_dir, markers, 'envparams-ssh')}'",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)

    def commit_more():
        """Plumbing with the traps disabled: the source's own config must not fire them in the test."""
        safe = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
        blob = run(*safe, "hash-object", "-w", "--no-filters", "--stdin", input=b"# More\n\nRAW-BYTES again\n")
        idx = {"GIT_INDEX_FILE": str(tmp_path / "index2")}
        run(*safe, "read-tree", "HEAD", env=idx)
        run(*safe, "update-index", "--add", "--cacheinfo", f"100644,{blob.stdout.decode().strip()},more.md", env=idx)
        tree = run(*safe, "write-tree", env=idx).stdout.decode().strip()
        c = run(*safe, "commit-tree", tree, "-p", "HEAD", "-m", "second").stdout.decode().strip()
        run(*safe, "update-ref", "refs/heads/main", c)

    return {"src": src, "markers": markers, "tmp": tmp_path, "commit_more": commit_more}


def test_control_a_plain_git_clone_does_fire_the_traps(armed):
    """Without the pipeline's safety a clone runs hooks, filters and pack hooks: the traps are real."""
    subprocess.run(
        ["git", "clone", "-q", "--no-local", str(armed["src"]), str(armed["tmp"] / "wt")], capture_output=True
    )
    subprocess.run(["git", "status"], cwd=armed["tmp"] / "wt", capture_output=True)  # consults core.fsmonitor
    fired = {p.name for p in armed["markers"].iterdir()}
    assert {
        "global-smudge",
        "global-process",
        "global-packobjects",
        "global-hook-reference-transaction",
        "envcount-fsmonitor",
    } <= fired, fired


def test_mirror_fetch_blob_history_and_ingest_run_nothing(armed):
    data = armed["tmp"] / "data"
    mirror = ensure_mirror(str(armed["src"]), mirror_path(data, "s"))  # clone
    armed["commit_more"]()  # a second commit, then a fetch into the existing mirror
    mirror = ensure_mirror(str(armed["src"]), mirror_path(data, "s"))  # fetch
    head = resolve_ref(mirror, "main")
    entries = {e.path: e for e in list_tree(mirror, head)}
    assert read_blob(mirror, entries["guide.md"].sha) == RAW
    assert [c.message.strip() for c in read_log(mirror, head)] == ["second", "first"]
    src = Source("s", str(armed["src"]), "main", "p", include=("**/*",))
    result = ingest_source(
        src,
        data,
        Identities(publishers={"p": Publisher("p", "P", "community")}),
        [],
        Policy.default(),
        approx_token_count,
    )
    docs = {d["path"]: d for d in result.tables["documents"].to_pylist()}
    assert docs["guide.md"]["content_sha256"] == hashlib.sha256(RAW).hexdigest()
    texts = " ".join(result.tables["chunks"].column("text").to_pylist())
    assert "RAW-BYTES-IN-THE-BLOB" in texts and "SMUDGED" not in texts
    assert sorted(p.name for p in armed["markers"].iterdir()) == []
    # Bare, no working tree, and the clone template left no hooks to run later.
    m = Path(mirror.git_dir)
    assert mirror.bare and not (m / "guide.md").exists()
    assert not (m / "hooks").exists() or not any((m / "hooks").iterdir())
    assert not (m / "modules").exists()


def test_ssh_url_never_runs_a_configured_ssh_command(armed):
    with pytest.raises(SourceError):
        ensure_mirror("ssh://git@127.0.0.1:9/x.git", mirror_path(armed["tmp"] / "data", "ssh"))
    assert sorted(p.name for p in armed["markers"].iterdir()) == []


# Where global-style configuration comes from, and the key each origin sets.
ORIGINS = [
    ("home_gitconfig", "global"),
    ("xdg_config", "xdg"),
    ("git_config_system", "system"),
    ("git_config_count_env", "envcount"),
    ("git_config_parameters_env", "envparams"),
]


@pytest.mark.parametrize("tag", [t for _n, t in ORIGINS], ids=[n for n, _t in ORIGINS])
def test_safe_env_neutralises_global_configuration(armed, tag):
    plain = subprocess.run(
        ["git", "config", "--list", "--show-origin"], capture_output=True, text=True, cwd=armed["tmp"]
    ).stdout
    assert f"/{tag}-" in plain  # control: a plain git reads this origin's traps
    safe = _git(str(armed["tmp"])).execute(["git", "config", "--list", "--show-origin"])
    assert f"/{tag}-" not in safe
    assert str(armed["markers"]) not in safe


def test_mirror_repo_objects_carry_the_safe_environment(armed):
    repo = ensure_mirror(str(armed["src"]), mirror_path(armed["tmp"] / "data", "s"))
    env = repo.git.environment()
    assert {k: env.get(k) for k in SAFE_ENV} == SAFE_ENV
    listed = repo.git.config("--list", "--show-origin")
    assert str(armed["markers"]) not in listed and "filter.evil" not in listed
    assert isinstance(repo, git.Repo) and repo.bare
