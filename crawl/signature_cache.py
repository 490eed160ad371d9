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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustindex.crawl.keyring import Keyring
from trustindex.crawl.signatures import SignatureCheck, TagSignature, commit_signatures

log = logging.getLogger(__name__)

FORMAT = 1
CACHE_DIR = ("cache", "signatures")  # under the data directory


def cache_file(data_dir: Path, source: str) -> Path:
    return Path(data_dir).joinpath(*CACHE_DIR, f"{source}.json")


@dataclass
class CheckCount:
    verified: int = 0  # commits and tags git checked this run
    cached: int = 0  # answered from the cache


class SignatureCache:
    def __init__(self, path: Path, keyring: Keyring):
        self.path = Path(path)
        self._keyring = keyring
        self.digest = keyring.digest
        self.valid_until = keyring.valid_until
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
        until = data.get("valid_until") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("digest") != self.digest:
            return
        if until is not None and time.time() >= until:
            return  # a listed key has expired since: its signatures' checks change
        self.commits = {k: v for k, v in data.get("commits", {}).items() if _entry(v)}
        self.tags = {k: v for k, v in data.get("tags", {}).items() if _entry(v)}

    def commit_checks(self, repo, shas: list[str]) -> dict[str, SignatureCheck]:
        """Each commit's check: from the cache, or from git for the rest (then kept)."""
        out = {s: SignatureCheck(*self.commits[s]) for s in shas if s in self.commits}
        missing = [s for s in shas if s not in out]
        self.count.cached += len(out)
        if missing:
            fresh = commit_signatures(repo, missing, self._keyring)
            self.count.verified += len(missing)
            for sha, check in fresh.items():
                if check.status != "error":
                    self.commits[sha] = [check.status, check.principal, check.fingerprint]
                    self._dirty = True
            out.update(fresh)
        return out

    def tag_check(self, obj: str) -> tuple[str, str, str] | None:
        hit = self.tags.get(obj)
        if hit is not None:
            self.count.cached += 1
            return hit[0], hit[1], hit[2]
        return None

    def keep_tag(self, obj: str, t: TagSignature) -> None:
        self.count.verified += 1
        if t.status != "error":
            self.tags[obj] = [t.status, t.principal, t.fingerprint]
            self._dirty = True

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
