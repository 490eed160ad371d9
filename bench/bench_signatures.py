"""Refresh cost of verifying signatures on a real-sized history, with and without the per-commit cache.

    PYTHONPATH=. .venv/bin/python bench/bench_signatures.py [--commits 3000] [--files 300]

The history has the shape of the real midnight-docs ``main`` (2,930 commits, 1,840 of them signed by
GitHub's web-flow key): pull-request merges ("Merge pull request #N from ...", two parents, the side
commit unsigned) and squash merges ("Title (#N)") signed by a platform OpenPGP key, and unsigned direct
commits; each commit changes one of ``--files`` Markdown pages.  Objects are written in-process (GitPython's
object database); each signature is a ``gpg --detach-sign`` as a forge makes it.

Measured on the same repository, each the median of ``--rounds``: ingest with no key listed (nothing to
verify: the reference), with the platform key listed and an empty signature cache (git verifies every
commit that touched a page, through gpg in the private keyring), and again with the cache warm.  A
no-change refresh reuses the source's tables and verifies nothing (flows/refresh.py), so the warm-cache
ingest is what a rebuild of the source costs (a policy or ledger edit, a new commit touching all pages).
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import WORK, figure, print_figures, save, setup_env  # noqa: E402

PLATFORM = "GitHub <noreply@github.com>"
AUTHORS = ["Ada Lovelace <ada@midnight.example>", "Priya Raman <priya@midnight.example>", "Jo <jo@example.org>"]
GOAL_SLOWDOWN_WARM = 1.2  # a warm-cache rebuild within 20% of one that verifies nothing


class Signer:
    def __init__(self, home: Path):
        self.home = home
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._gpg("--quick-gen-key", PLATFORM, "ed25519", "sign", "0")
        self.public = self._gpg("--armor", "--export", "noreply@github.com").decode()

    def _gpg(self, *args: str, data: bytes | None = None) -> bytes:
        base = ["gpg", "--homedir", str(self.home), "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
        return subprocess.run([*base, *args], input=data, capture_output=True, check=True).stdout

    def sign(self, payload: bytes) -> bytes:
        return self._gpg("--local-user", "noreply@github.com", "--detach-sign", "--armor", data=payload)

    def close(self) -> None:
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "gpg-agent"], check=False)


class History:
    """Merges (side commit + signed merge), signed squashes and unsigned direct commits, oldest first, written
    straight into the object database; ``extend`` adds more on top of ``main``."""

    def __init__(self, path: Path, n_files: int, signer: Signer):
        import git

        self.repo = git.Repo.init(path, initial_branch="main")
        self.signer, self.n_files = signer, n_files
        self.t, self.k = 1_600_000_000, 0
        self.counts = {"signed": 0, "unsigned": 0}
        self.files = {
            f"page-{i:04d}.md": self._store(b"blob", f"# Page {i}\n\nFirst version.\n".encode()) for i in range(n_files)
        }
        self.head = self._commit("Initial import", AUTHORS[0], [], False)
        self._update()

    def _store(self, kind: bytes, data: bytes) -> bytes:
        from gitdb.base import IStream

        return self.repo.odb.store(IStream(kind, len(data), io.BytesIO(data))).binsha

    def _commit(self, message: str, author: str, parents: list[bytes], sign: bool) -> bytes:
        self.t += 3600
        entries = b"".join(b"100644 " + n.encode() + b"\0" + self.files[n] for n in sorted(self.files))
        body = f"tree {self._store(b'tree', entries).hex()}\n" + "".join(f"parent {p.hex()}\n" for p in parents)
        committer = PLATFORM if sign else author
        body += f"author {author} {self.t} +0000\ncommitter {committer} {self.t} +0000\n\n{message}\n"
        data = body.encode()
        if sign:
            sig = self.signer.sign(data)
            head, sep, msg = data.partition(b"\n\n")
            data = head + b"\ngpgsig " + b"\n ".join(sig.rstrip(b"\n").split(b"\n")) + sep + msg
        self.counts["signed" if sign else "unsigned"] += 1
        return self._store(b"commit", data)

    def _update(self) -> None:
        self.repo.git.update_ref("refs/heads/main", self.head.hex())

    def extend(self, n_commits: int) -> None:
        goal = sum(self.counts.values()) + n_commits
        while sum(self.counts.values()) < goal:
            self.k += 1
            k, name = self.k, f"page-{self.k % self.n_files:04d}.md"
            author = AUTHORS[k % len(AUTHORS)]
            self.files[name] = self._store(b"blob", f"# Page {k % self.n_files}\n\nRevision {k}.\n".encode())
            kind = ("merge", "squash", "squash", "merge", "squash", "direct")[k % 6]  # ~62% signed, as the real one
            if kind == "merge" and sum(self.counts.values()) + 2 <= goal:
                side = self._commit(f"Revise {name}", author, [self.head], False)
                message = f"Merge pull request #{k} from org/revise-{k}\n\nRevise {name}"
                self.head = self._commit(message, author, [self.head, side], True)
            elif kind == "squash":
                self.head = self._commit(f"Revise {name} (#{k})", author, [self.head], True)
            else:
                self.head = self._commit(f"Revise {name}", author, [self.head], False)
        self._update()


def identities(path: Path, platform_key: str | None) -> Path:
    text = (
        '[[publisher]]\nid = "mf"\nname = "Midnight Foundation"\ntier = "foundation"\n'
        '[[person]]\nname = "Ada Lovelace"\nemails = ["ada@midnight.example"]\npublisher = "mf"\n'
    )
    if platform_key:
        text += (
            f"[[platform]]\nname = \"GitHub\"\ncommitter = \"{PLATFORM}\"\ngpg_keys = ['''{platform_key.strip()}''']\n"
        )
    path.write_text(text)
    return path


def run(n_commits: int, n_files: int, rounds: int) -> dict:
    from trustindex.crawl.signature_cache import cache_file
    from trustindex.extractors.base import approx_token_count
    from trustindex.ingest.incremental import Previous
    from trustindex.ingest.source import IngestRun, ingest_source
    from trustindex.schemas.config import Source, load_identities
    from trustindex.schemas.policy import Policy

    root = WORK / "signatures"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    signer = Signer(Path(tempfile.mkdtemp(prefix="bench-gpg-")))
    t0 = time.perf_counter()
    history = History(root / "repo", n_files, signer)
    history.extend(n_commits - 1)
    build_s = time.perf_counter() - t0
    counts = dict(history.counts)
    source = Source("docs", str(root / "repo"), "main", "mf")
    policy = Policy.default()
    plain = load_identities(identities(root / "plain.toml", None))
    keyed = load_identities(identities(root / "keyed.toml", signer.public))

    def ingest(ids, data: Path, previous=None):
        t = time.perf_counter()
        r = ingest_source(source, data, ids, [], policy, approx_token_count, IngestRun(previous=previous))
        return time.perf_counter() - t, r

    ingest(plain, root / "warmup")  # mirror clone and page cache: paid once, outside the figures
    none_s, cold_s, warm_s = [], [], []
    for i in range(rounds):
        data = root / f"data-{i}"
        shutil.copytree(root / "warmup" / "mirrors", data / "mirrors")
        s, plain_r = ingest(plain, data)
        none_s.append(s)
        s, cold = ingest(keyed, data)
        cold_s.append(s)
        assert cache_file(data, "docs").is_file()
        s, warm = ingest(keyed, data)
        warm_s.append(s)
    # A refresh after 1% new commits (the warm cache holds the rest): incremental, only the new ones verified.
    history.extend(max(1, n_commits // 100))
    signer.close()
    shutil.rmtree(signer.home, ignore_errors=True)
    inc_plain_s, _ = ingest(plain, data, Previous(plain_r.commit, plain_r.tables))
    inc_s, inc = ingest(keyed, data, Previous(warm.commit, warm.tables))
    rows = cold.tables["verifications"].to_pylist()
    authenticated = sum(1 for v in rows if v["evidence_class"] == "authenticated")
    none_m, cold_m, warm_m = (statistics.median(x) for x in (none_s, cold_s, warm_s))
    checked = cold.signature_checks.verified
    figures = [
        figure("history (commits, platform-signed)", counts["signed"] + counts["unsigned"], "commits"),
        figure("platform-signed commits", counts["signed"], "commits"),
        figure("ingest, no key listed (nothing verified)", none_m, "s"),
        figure(
            f"ingest, platform key listed, cold cache ({checked} commits checked by git)",
            cold_m,
            "s",
            "no key listed (s)",
            none_m,
            cold_m / none_m,
        ),
        figure("signature check, per commit (cold)", (cold_m - none_m) / max(1, checked) * 1000, "ms"),
        figure(
            f"ingest, warm cache ({warm.signature_checks.verified} checked, {warm.signature_checks.cached} cached)",
            warm_m,
            "s",
            "no key listed (s)",
            none_m,
            warm_m / none_m,
            f"≤ {GOAL_SLOWDOWN_WARM}×",
            warm_m / none_m <= GOAL_SLOWDOWN_WARM,
        ),
        figure(
            f"refresh after {n_commits // 100} new commits, 1% ({inc.signature_checks.verified} checked by git, "
            f"{inc.signature_checks.cached} cached)",
            inc_s,
            "s",
            "same refresh, no key listed (s)",
            inc_plain_s,
            inc_s / inc_plain_s,
        ),
        figure("authenticated merge links (cold run)", authenticated, "links"),
    ]
    return {
        "figures": figures,
        "commits": counts,
        "files": n_files,
        "build_history_s": build_s,
        "none_s": none_s,
        "cold_s": cold_s,
        "warm_s": warm_s,
        "checked_cold": checked,
        "checked_warm": warm.signature_checks.verified,
        "incremental_s": inc_s,
        "incremental_no_key_s": inc_plain_s,
        "checked_incremental": inc.signature_checks.verified,
        "cached_warm": warm.signature_checks.cached,
        "method": f"synthetic repository of {sum(counts.values())} commits ({counts['signed']} signed by a platform "
        f"OpenPGP ed25519 key: pull-request merges and squashes; the rest unsigned side and direct commits) over "
        f"{n_files} Markdown pages; ingest_source (extraction and evidence, no embedding) with no key listed, "
        f"then the platform key listed with an empty signature cache, then warm; median of {rounds} rounds; "
        "ratio = time / the no-key ingest of the same round set. Then 1% more commits and an incremental ingest "
        "from the warm run's tables (only the new commits reach git). A no-change refresh reuses the tables and "
        "verifies nothing.",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    r = run(a.commits, a.files, a.rounds)
    print_figures("signatures", r["figures"])
    if not a.no_save:
        save("signatures", r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
