"""Signature checks kept per commit (and per tag object) so a refresh verifies each signature once.

A check depends only on the object (its sha names its bytes), the operator's keys and the time (a key can
expire).  So the cache file of a source holds the checks made against one keyring, named by its digest, and
is valid until the first future expiry of a listed key; a different keyring, a key past its expiry or an
unreadable file starts it afresh.  ``error`` results are not kept: they may be transient.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustindex.crawl.keyring import Keyring
from trustindex.crawl.signatures import SignatureCheck, TagSignature, check_tags, commit_signatures

log = logging.getLogger(__name__)

FORMAT = 1
CACHE_DIR = ("cache", "signatures")  # under the data directory
Tag = tuple[str, str, str, datetime]  # crawl.signatures.annotated_tags: name, tag object sha, commit, tagger date


def cache_file(data_dir: Path, source: str) -> Path:
    return Path(data_dir).joinpath(*CACHE_DIR, f"{source}.json")


@dataclass
class CheckCount:
    verified: int = 0  # commits and tags git checked this run
    cached: int = 0  # answered from the cache


class SignatureCache:
    """One source's checks against the keys named by ``digest`` (crawl.keyring.keys_digest)."""

    def __init__(self, path: Path, digest: str):
        self.path = Path(path)
        self.digest = digest
        self.valid_until: float | None = None
        self.commits: dict[str, list[str]] = {}
        self.tags: dict[str, list[str]] = {}
        self.count = CheckCount()
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as e:
            log.warning("%s: unreadable signature cache, starting afresh: %s", self.path, e)
            return
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("digest") != self.digest:
            return
        until = data.get("valid_until")
        if isinstance(until, (int, float)) and time.time() >= until:
            return  # a listed key has expired since: its signatures' checks change
        self.valid_until = until if isinstance(until, (int, float)) else None
        self.commits = {k: v for k, v in data.get("commits", {}).items() if _entry(v)}
        self.tags = {k: v for k, v in data.get("tags", {}).items() if _entry(v)}

    def verify(
        self, repo, shas: list[str], tags: list[Tag], keyring: Callable[[], AbstractContextManager[Keyring | None]]
    ) -> tuple[dict[str, SignatureCheck], list[TagSignature]]:
        """Each commit's and tag's check: from the cache, or from git for the rest (then kept).  The keyring
        (``keyring()``, a context manager) is set up only when something is not cached."""
        missing = [s for s in shas if s not in self.commits]
        new_tags = [t for t in tags if t[1] not in self.tags]
        self.count.cached += len(shas) - len(missing) + len(tags) - len(new_tags)
        if missing or new_tags:
            with keyring() as kr:
                if kr is None:
                    return {}, []
                self.valid_until = kr.valid_until
                fresh = commit_signatures(repo, missing, kr) if missing else {}
                checked = check_tags(repo, new_tags, kr)
            self.count.verified += len(missing) + len(new_tags)
            for sha, check in fresh.items():
                if check.status != "error":  # maybe transient: checked again next time
                    self.commits[sha] = [check.status, check.principal, check.fingerprint]
                    self._dirty = True
            for (_n, obj, _c, _w), t in zip(new_tags, checked, strict=True):
                if t.status != "error":
                    self.tags[obj] = [t.status, t.principal, t.fingerprint]
                    self._dirty = True
        else:
            fresh, checked = {}, []
        commits = {s: SignatureCheck(*self.commits[s]) for s in shas if s in self.commits} | fresh
        by_obj = {obj: t for (_n, obj, _c, _w), t in zip(new_tags, checked, strict=True)}
        out_tags = [
            by_obj[obj]
            if obj in by_obj
            else TagSignature(name, commit, self.tags[obj][1], when, self.tags[obj][0], self.tags[obj][2])
            for name, obj, commit, when in tags
        ]
        return commits, out_tags

    def save(self) -> None:
        """Write atomically (a crash leaves the old file or the new one, never half of one)."""
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": FORMAT,
            "digest": self.digest,
            "valid_until": self.valid_until,
            "written": datetime.now(UTC).isoformat(),
            "commits": self.commits,
            "tags": self.tags,
        }
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)
        self._dirty = False


def _entry(v) -> bool:
    return isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) for x in v)
