"""Signature checks are cached per commit: a refresh with the same keys runs no verification again.

The count is of commits (and tags) sent to git for checking, versus answered from the cache file in the
data directory; the stored evidence must be the same either way.  Another keyring, a listed key's expiry
or a damaged file start the cache afresh.
"""

from __future__ import annotations

import json
import shutil
import time
from contextlib import nullcontext

import pytest

from tests.kits.sigkit import SignedRepo, SshKey
from trustindex.crawl.git import ensure_mirror
from trustindex.crawl.keyring import Keyring
from trustindex.crawl.signature_cache import SignatureCache, cache_file
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.schemas.config import Source, load_identities
from trustindex.schemas.policy import Policy

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) missing")

EVE = "Eve <eve@evil.example>"


def identities(tmp, keys: list[str]):
    (tmp / "identities.toml").write_text(
        '[[publisher]]\nid = "mf"\ntier = "foundation"\n[[person]]\nname = "Ada"\nemails = ["ada@mf.example"]\n'
        f'publisher = "mf"\nsigning_keys = {json.dumps(keys)}\n'
    )
    return load_identities(tmp / "identities.toml")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cache")
    ada, other = SshKey(tmp, "ada"), SshKey(tmp, "other")
    repo = SignedRepo(tmp / "repo")
    tree: dict[str, str] = {}
    for i in range(12):
        tree[f"p{i % 4}.md"] = f"# Page {i}\n\nVersion {i}.\n"
        repo.signed_commit(dict(tree), f"Edit {i}", EVE, 1736155800 + i * 86400, sign=ada.sign if i % 2 else None)
    return {"tmp": tmp, "repo": repo, "ada": ada, "other": other}


def ingest(world, ids, data):
    source = Source("docs", str(world["repo"].path), "main", "mf")
    return ingest_source(source, data, ids, [], Policy.default(), approx_token_count)


def rows(result):
    return sorted(result.tables["verifications"].to_pylist(), key=lambda r: (r["doc_id"], r["commit"]))


def test_a_second_refresh_verifies_nothing_again(world, tmp_path):
    ids = identities(tmp_path, [world["ada"].public])
    first = ingest(world, ids, tmp_path / "data")
    assert first.signature_checks.verified == 12 and first.signature_checks.cached == 0
    assert cache_file(tmp_path / "data", "docs").is_file()
    second = ingest(world, ids, tmp_path / "data")
    assert (second.signature_checks.verified, second.signature_checks.cached) == (0, 12)
    assert rows(second) == rows(first) and any(r["evidence_class"] == "authenticated" for r in rows(first))


def test_other_keys_or_a_damaged_file_verify_again(world, tmp_path):
    data = tmp_path / "data"
    ingest(world, identities(tmp_path, [world["ada"].public]), data)
    wider = ingest(world, identities(tmp_path, [world["ada"].public, world["other"].public]), data)
    assert (wider.signature_checks.verified, wider.signature_checks.cached) == (12, 0)
    cache_file(data, "docs").write_text("{not json")
    again = ingest(world, identities(tmp_path, [world["ada"].public, world["other"].public]), data)
    assert (again.signature_checks.verified, again.signature_checks.cached) == (12, 0)
    assert json.loads(cache_file(data, "docs").read_text())["format"] == 1  # rewritten whole


def test_checks_expire_with_the_first_listed_key(world, tmp_path):
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'ada@mf.example namespaces="git" {world["ada"].public}\n')
    mirror = ensure_mirror(str(world["repo"].path), tmp_path / "mirror.git")
    head = world["repo"].git("rev-parse", "main").decode().strip()
    keyring = Keyring.ssh(allowed)
    keyring.valid_until = time.time() + 1.0
    cache = SignatureCache(tmp_path / "c.json", keyring.digest)
    checks, _tags = cache.verify(mirror, [head], [], lambda: nullcontext(keyring))
    assert checks[head].status == "good" and cache.count.verified == 1
    cache.save()
    again = SignatureCache(tmp_path / "c.json", keyring.digest)
    assert again.verify(mirror, [head], [], _no_keyring)[0] == checks  # still valid: no keyring needed
    time.sleep(1.1)
    assert SignatureCache(tmp_path / "c.json", keyring.digest).commits == {}  # a key has expired since


def _no_keyring():
    raise AssertionError("everything was cached: no keyring should be set up")
