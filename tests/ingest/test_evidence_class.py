"""Claimed evidence never crosses publishers; authenticated and operator evidence lends its verifier's tier.

A repository that a community publisher controls writes a foundation person's name and address into
review trailers and into an unsigned pull-request merge (author and committer both that person).  The
links are kept, marked ``claimed``, and lend only the community tier; with
``verification.require_authenticated`` they lend nothing.  The same person's SSH signature (a key the
operator lists) on a commit in that repository is ``authenticated`` and lends the foundation tier
(a person's own tier follows them across publishers), and so does an operator ledger entry.
"""

from __future__ import annotations

import shutil

import pytest

from tests.kits.sigkit import IDENTITIES, SignedRepo, SshKey
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.query.trust import verification_factor
from trustindex.schemas.config import LedgerEntry, Source, load_identities
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import Policy

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) missing")

POLICY = Policy.default()
STRICT = Policy.from_dict({"verification": {"require_authenticated": True}})
TIERS = POLICY.verification.tiers
ADA = "Ada Lovelace <ada@mf.example>"
EVE = "Eve <eve@evil.example>"


def identities(ada_key: str) -> str:
    return (
        IDENTITIES
        + f"""signing_keys = ["{ada_key}"]

[[person]]
name = "Carl"
emails = ["carl@owls.example"]
publisher = "com"
"""
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("claimed")
    ada = SshKey(tmp, "ada_key")
    (tmp / "identities.toml").write_text(identities(ada.public))
    ids = load_identities(tmp / "identities.toml")
    repo = SignedRepo(tmp / "repo")
    tree = {"README.md": "# Owls\n"}
    t = 1736155800

    def commit(files, message, author=EVE, **kw):
        nonlocal t
        t += 86400
        tree.update(files)
        return repo.signed_commit(dict(tree), message, author, t, **kw)

    commit({}, "Initial")
    commit({"trailer.md": "# Trailer\n\nBody.\n"}, f"Add page\n\nReviewed-by: {ADA}\nApproved-by: {ADA}")
    base = commit({}, "Before the pull request")
    side = commit({"merged.md": "# Merged\n\nBody.\n"}, "Add merged page", parents=[base], ref="refs/heads/pr")
    commit({}, "Merge pull request #7 from evil/feature\n\nAdd merged page", ADA, parents=[base, side])
    commit({"signed.md": "# Signed\n\nBody.\n"}, "Add signed page", EVE, sign=ada.sign)
    commit({"ledger.md": "# Ledger\n\nBody.\n"}, "Add ledger page")
    head = commit({"carl.md": "# Carl\n\nBody.\n"}, "Add page\n\nReviewed-by: Carl <carl@owls.example>")
    source = Source("owls", str(repo.path), "main", "com", include=("**/*.md",))
    ledger = [LedgerEntry("owls", "ledger.md", head, "ada@mf.example", note="read it")]
    result = ingest_source(source, tmp / "data", ids, ledger, POLICY, approx_token_count)
    t_ = {name: tab.to_pylist() for name, tab in result.tables.items()}
    docs = {d["path"]: d["doc_id"] for d in t_["documents"]}
    return {p: [v for v in t_["verifications"] if v["doc_id"] == d] for p, d in docs.items()}


def test_trailers_in_a_foundation_persons_name_are_claimed_and_lend_the_community_tier(hostile):
    links = hostile["trailer.md"]
    assert {(v["method"], v["tier"], v["evidence_class"]) for v in links} == {("trailer", "foundation", "claimed")}
    vf = verification_factor(links, POLICY, "community")
    assert (vf.status, vf.multiplier) == ("verified", TIERS.community)
    best = vf.evidence.best
    assert (best.tier, best.lends_tier, best.evidence_class) == ("foundation", "community", "claimed")
    assert "claimed evidence" in best.note and "counts as community, not foundation" in best.note
    assert all(c.lends_tier == "community" and c.note for c in vf.evidence.chain)


def test_an_unsigned_merge_in_a_foundation_persons_name_is_claimed(hostile):
    [link] = hostile["merged.md"]
    assert (link["method"], link["verifier_email"], link["tier"]) == ("merge", "ada@mf.example", "foundation")
    assert link["evidence_class"] == "claimed" and "unsigned merge commit" in link["detail"]
    vf = verification_factor([link], POLICY, "community")
    assert vf.multiplier == TIERS.community < TIERS.foundation


def test_a_listed_persons_signature_in_another_publishers_repository_lends_their_tier(hostile):
    [link] = hostile["signed.md"]
    assert (link["method"], link["tier"], link["evidence_class"]) == ("signature", "foundation", "authenticated")
    for policy in (POLICY, STRICT):
        vf = verification_factor([link], policy, "community")
        assert (vf.status, vf.multiplier) == ("verified", TIERS.foundation)
        assert vf.evidence.best.note is None  # shown without a note


def test_an_operator_ledger_entry_lends_the_tier_the_operator_gave(hostile):
    [link] = hostile["ledger.md"]
    assert (link["method"], link["tier"], link["evidence_class"]) == ("ledger", "foundation", "operator")
    assert verification_factor([link], STRICT, "community").multiplier == TIERS.foundation


def test_require_authenticated_leaves_only_signed_and_ledger_links_changing_scores(hostile):
    unverified = POLICY.verification.unverified
    for path in ("trailer.md", "merged.md", "carl.md"):
        vf = verification_factor(hostile[path], STRICT, "community")
        assert (vf.status, vf.multiplier) == ("unverified", unverified), path
        assert all(c.lends_tier == "unknown" and "requires authenticated" in c.note for c in vf.evidence.chain)
    # A strict policy with different numbers still moves only the authenticated and operator pages.
    odd = Policy.from_dict({"verification": {"require_authenticated": True, "unverified": 0.5, "stale": 0.4}})
    moved = {p: verification_factor(v, odd, "community").multiplier for p, v in hostile.items() if v}
    assert moved == {"trailer.md": 0.5, "merged.md": 0.5, "carl.md": 0.5, "signed.md": 1.0, "ledger.md": 1.0}


def test_claimed_evidence_is_never_raised_to_the_home_tier(hostile):
    """A community reviewer's trailer in a foundation repository stays community; an unattributed document's
    claimed links lend nothing."""
    carl = hostile["carl.md"]
    assert verification_factor(carl, POLICY, "community").multiplier == TIERS.community
    assert verification_factor(carl, POLICY, "foundation").multiplier == TIERS.community
    assert verification_factor(hostile["trailer.md"], POLICY, None).status == "unverified"


def test_rows_written_before_the_class_column_take_the_class_of_their_method(hostile):
    old = [{k: v for k, v in link.items() if k != "evidence_class"} for link in hostile["trailer.md"]]
    old += [{k: v for k, v in link.items() if k != "evidence_class"} for link in hostile["signed.md"]]
    chain = verification_factor(old, POLICY, "community").evidence.chain
    assert sorted((c.method, c.evidence_class) for c in chain) == [
        ("signature", "authenticated"),
        ("trailer", "claimed"),
        ("trailer", "claimed"),
    ]


def test_require_authenticated_is_a_boolean():
    assert Policy.default().verification.require_authenticated is False
    assert "require_authenticated = true" in STRICT.to_toml()
    with pytest.raises(ConfigError, match="require_authenticated: expected true or false"):
        Policy.from_dict({"verification": {"require_authenticated": 1}})
