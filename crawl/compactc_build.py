"""Build ``compactc`` from a release tag of the compiler's repository with Chez Scheme, cached by tag and Chez.

The build is the ``buildPhase`` of the repository's ``flake.nix``: the files of the tag that the flake's
``compactc`` package includes are read from the mirror's blobs (never checked out) into a build directory, the two
pinned Scheme dependencies (nanopass, rough-draft's ``src``) are unpacked beside them, and Chez compiles
``compiler/compactc.ss`` whole-program into ``obj/compactc`` (a ``#!`` script run by ``scheme --program``).  About
2 minutes of one core per tag; the result lives under ``<data>/compilers/<tag>+chez-<version>/`` and is reused
while that file exists.  Only operator-configured tags are built: the operator trusts the compiler they named.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import git

from trustindex.crawl.git import list_tree, read_blob, resolve_ref

# The flake's `src = inclusive ... [ ... ]` of the compactc package (what the build reads).
BUILD_PATHS = (
    "compiler/",
    "third_party/compiler/",
    "srcMaps/",
    "flake.nix",
    "runtime/extract-version.ss",
    "runtime/package.json",
)
_SAFE_TAG = re.compile(r"[^A-Za-z0-9._-]")
_BUILD_SCRIPT = """
(reset-handler abort)
(optimize-level 2)
(compile-imported-libraries #t)
(generate-wpo-files #t)
(generate-inspector-information #f)
(compile-profile #f)
(compile-program "obj/compiler/compactc.ss" "obj/compiler/compactc.so")
(compile-whole-program "obj/compiler/compactc.wpo" "obj/compactc")
"""


class BuildError(RuntimeError):
    pass


def scheme_executable() -> str | None:
    return shutil.which("scheme") or shutil.which("chezscheme")


@functools.cache
def chez_version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    text = (out.stderr or out.stdout).strip()
    if out.returncode != 0 or not re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", text):
        raise BuildError(f"{exe} --version: unexpected answer {text[:80]!r}")
    return text


def build_dir_of(data_dir: Path, tag: str, chez: str) -> Path:
    return Path(data_dir) / "compilers" / f"{_SAFE_TAG.sub('_', tag)}+chez-{chez}"


def compiler_argv(program: Path, scheme: str) -> list[str]:
    return [scheme, "--program", str(program)]


def _unpack(dep: Path, dest: Path) -> Path:
    """A dependency as a folder: itself, or a tarball unpacked into ``dest`` (its single top folder)."""
    if dep.is_dir():
        return dep
    if not dep.is_file():
        raise BuildError(f"{dep}: dependency not found")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dep) as tar:
        tar.extractall(dest, filter="data")
    tops = [p for p in dest.iterdir() if p.is_dir()]
    return tops[0] if len(tops) == 1 else dest


def _write_tree(repo: git.Repo, commit: str, dest: Path) -> int:
    n = 0
    for e in list_tree(repo, commit):
        if e.invalid or e.missing or not any(e.path == p or e.path.startswith(p) for p in BUILD_PATHS):
            continue
        if (e.mode & 0o170000) != 0o100000:  # regular files only: no symlinks or submodules into the build
            continue
        target = dest / e.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_blob(repo, e.sha))
        n += 1
    if not (dest / "compiler" / "compactc.ss").is_file() or not (dest / "flake.nix").is_file():
        raise BuildError(f"{commit[:12]}: no compiler/compactc.ss or flake.nix at this commit")
    return n


def build_compactc(repo: git.Repo, tag: str, nanopass: Path, rough_draft: Path, data_dir: Path) -> Path:
    """The built ``obj/compactc`` of ``tag`` (built now unless the cache holds it); BuildError says why not."""
    scheme = scheme_executable()
    if scheme is None:
        raise BuildError("Chez Scheme is not installed (apt-get install chezscheme)")
    chez = chez_version(scheme)
    final = build_dir_of(data_dir, tag, chez)
    program = final / "obj" / "compactc"
    if program.is_file():
        return program
    commit = resolve_ref(repo, tag)
    work = final.with_name(final.name + f".build-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    try:
        _write_tree(repo, commit, work)
        np_dir = _unpack(Path(nanopass), work / "_deps" / "nanopass")
        rd_dir = _unpack(Path(rough_draft), work / "_deps" / "rough-draft")
        (work / "obj" / "compiler").mkdir(parents=True, exist_ok=True)
        main = (work / "compiler" / "compactc.ss").read_text(encoding="utf-8")
        main = re.sub(r"^#!\s*/usr/bin/env .*$", f"#! {scheme} --program", main, count=1, flags=re.M)
        (work / "obj" / "compiler" / "compactc.ss").write_text(main, encoding="utf-8")
        libdirs = ":".join(
            [
                "compiler::obj/compiler",
                "third_party/compiler::obj/third_party/compiler",
                f"{np_dir}::obj/nanopass",
                f"{rd_dir / 'src'}::obj/rough-draft",
                "srcMaps::obj/srcMaps",
                "obj/compiler",
            ]
        )
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CHEZSCHEMELIBDIRS": libdirs}
        run = subprocess.run(
            [scheme, "-q"], input=_BUILD_SCRIPT, cwd=work, env=env, capture_output=True, text=True, timeout=3600
        )
        built = work / "obj" / "compactc"
        if run.returncode != 0 or not built.is_file():
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BuildError(f"building {tag} with Chez {chez} failed: {tail[0][:300]}")
        built.chmod(0o755)
        final.mkdir(parents=True, exist_ok=True)
        (final / "obj").mkdir(exist_ok=True)
        os.replace(built, program)  # the cache entry appears whole or not at all
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return program
