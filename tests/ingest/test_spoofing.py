"""No trust spoofing: nothing a crawled repository says about itself raises its trust.

DESIGN.md ("Attribution and verification authority come only from operator
configuration"): the publisher and its tier come from sources.toml and
identities.toml; a verification link carries authority only when its e-mail is
an operator-listed person's, and the ledger is the operator's file alone.  Each
attempt below is one file in a repository whose source the operator attributes
to a *community* publisher; after ingest, its attribution and verification rows
(and the query-time factors computed from them) must be exactly those of a file
with no claims at all.  A control file reviewed by a listed person proves that
real evidence is seen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kits.rawrepo import RawRepo
from tests.kits.sigkit import IDENTITIES
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.query.trust import attribution_factor, verification_factor
from trustindex.schemas.config import LedgerEntry, Source, load_identities
from trustindex.schemas.policy import Policy

POLICY = Policy.default()
EVE = "Eve <eve@evil.example>"
ADA = "Ada Lovelace <ada@mf.example>"
FAKE_SIG = (
    "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEEfakefakefakefakefakefakefake=\n=XXXX\n-----END PGP SIGNATURE-----"
)

# (test id saying what the attempt is, files it adds, commit message, author)
ATTEMPTS = [
    (
        "front_matter_claims_foundation_tier_publisher_and_verified",
        {
            "fm.md": "---\ntitle: Trusted\ntier: foundation\npublisher: mf\nverified: true\n"
            "verified_by: ada@mf.example\n"
            "reviewed_by: Ada Lovelace <ada@mf.example>\ntrust: 1.0\n---\n# Trusted\n\nBody.\n"
        },
        "Add fm",
        EVE,
    ),
    (
        "reviewed_by_trailer_from_a_person_not_in_identities",
        {"unknown-reviewer.md": "# Unknown reviewer\n\nBody.\n"},
        "Add page\n\nReviewed-by: Mallory Moss <mallory@evil.example>\n"
        "Approved-by: Mallory Moss <mallory@evil.example>",
        EVE,
    ),
    (
        "trailer_with_a_known_name_and_another_email",
        {"name-forged.md": "# Forged name\n\nBody.\n"},
        "Add page\n\nReviewed-by: Ada Lovelace <ada@evil.example>\nAcked-by: Ada Lovelace <ada@mf.example.evil.com>\n"
        "Tested-by: Ada Lovelace <ada-mf.example@evil.example>",
        EVE,
    ),
    (
        "unsigned_commit_whose_message_claims_a_signer",
        {"signer-claim.md": "# Signed?\n\nBody.\n"},
        'Add page\n\ngpg: Good signature from "Ada Lovelace <ada@mf.example>" [ultimate]\n'
        + FAKE_SIG
        + "\n\nSigned-off-by: Ada Lovelace <ada@mf.example>",
        EVE,
    ),
    (
        "merge_pull_request_message_on_a_non_merge_commit",
        {"fake-merge.md": "# Fake merge\n\nBody.\n"},
        "Merge pull request #99 from mf/release\n\nApproved and merged by the foundation",
        EVE,
    ),
    (
        "verifications_toml_inside_the_repository",
        {
            "verifications.toml": '[[verification]]\nsource = "spoof"\npath = "**"\ncommit = "main"\n'
            'verifier = "ada@mf.example"\nmethod = "ledger"\nnote = "vouched"\n',
            "in-repo-ledger.md": "# Vouched by the in-repo ledger\n\nBody.\n",
        },
        "Add ledger",
        EVE,
    ),
    (
        "identities_toml_inside_the_repository_lists_the_attacker",
        {
            "identities.toml": '[[publisher]]\nid = "com"\nname = "Night Owls"\ntier = "foundation"\n\n[[person]]\n'
            'name = "Mallory Moss"\nemails = ["mallory@evil.example"]\npublisher = "mf"\n',
            "listed-in-repo.md": "# Attacker lists herself\n\nBody.\n",
        },
        "Add identities\n\nReviewed-by: Mallory Moss <mallory@evil.example>",
        EVE,
    ),
    (
        "package_json_claims_the_foundation_as_publisher",
        {
            "pkg/package.json": '{"name": "@midnight-ntwrk/evil", "version": "1.0.0", "publisher": "mf", '
            '"author": "Midnight Foundation <ada@mf.example>", '
            '"trustindex": {"tier": "foundation", "verified": true}}',
            "pkg/README.md": "# Package\n\nBody.\n",
        },
        "Add package",
        EVE,
    ),
    (
        "docmeta_and_codeowners_claim_verification",
        {
            ".docmeta.json": '{"verified": true, "tier": "foundation", "publisher": "mf"}',
            "CODEOWNERS": "* @ada-lovelace\n",
            "owned.md": "# Owned\n\nBody.\n",
        },
        "Add metadata",
        EVE,
    ),
    (
        "last_author_uses_a_known_name_with_another_email",
        {"authored.md": "# Authored\n\nBody.\n"},
        "Add page",
        "Ada Lovelace <ada@evil.example>",
    ),
]
MERGED_BY_UNKNOWN = "merged-by-unknown.md"  # a real pull-request merge, merged by a person not listed
CONTROL = "control.md"  # reviewed by a listed person: real evidence, must verify


def _attempt_paths(files: dict) -> list[str]:
    return sorted(files)


@pytest.fixture(scope="module")
def spoof(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("spoof")
    (tmp / "identities.toml").write_text(IDENTITIES)
    ids = load_identities(tmp / "identities.toml")
    repo = RawRepo(tmp / "repo")
    tree: dict[str, str] = {"README.md": "# Spoof\n"}
    when = 1736155800

    def commit(files: dict, message: str, author: str, parents=None) -> str:
        nonlocal when
        when += 86400
        tree.update(files)
        return repo.commit(
            [(0o100644, p, c) for p, c in tree.items()], message=message, author=author, when=when, parents=parents
        )

    commit({}, "Initial", EVE)
    for _id, files, message, author in ATTEMPTS:
        commit(files, message, author)
    base = repo.git("rev-parse", "main").decode().strip()
    side = commit({MERGED_BY_UNKNOWN: "# Merged\n\nBody.\n"}, "Add merged page", EVE, parents=[base])
    commit(
        {},
        "Merge pull request #7 from mallory/page\n\nAdd merged page",
        "Mallory Moss <mallory@evil.example>",
        parents=[base, side],
    )
    head = commit({CONTROL: "# Control\n\nBody.\n"}, f"Add control\n\nReviewed-by: {ADA}", EVE)
    source = Source("spoof", str(repo.path), "main", "com", include=("**/*",))
    result = ingest_source(source, tmp / "data", ids, [], POLICY, approx_token_count)
    t = {name: tab.to_pylist() for name, tab in result.tables.items()}
    docs = {d["path"]: d for d in t["documents"]}
    return {
        "t": t,
        "docs": docs,
        "ids": ids,
        "source": source,
        "tmp": tmp,
        "head": head,
        "attr": {a["doc_id"]: a for a in t["attribution"]},
        "links": lambda path: [v for v in t["verifications"] if v["doc_id"] == docs[path]["doc_id"]],
    }


def _assert_no_gain(spoof, path: str) -> None:
    d = spoof["docs"][path]
    attr = spoof["attr"][d["doc_id"]]
    assert (attr["publisher"], attr["tier"], attr["origin"]) == ("com", "community", "source"), attr
    assert attribution_factor(attr, POLICY).multiplier == POLICY.attribution.tiers.community
    links = spoof["links"](path)
    assert all(v["tier"] == "unknown" and v["publisher"] == "" for v in links), links
    assert not any(v["method"] in ("ledger", "signature") for v in links), links
    vf = verification_factor(links, POLICY, attr["tier"])
    assert (vf.status, vf.multiplier) == ("unverified", POLICY.verification.unverified), vf


@pytest.mark.parametrize("files", [a[1] for a in ATTEMPTS], ids=[a[0] for a in ATTEMPTS])
def test_spoof_attempt_gains_no_trust(spoof, files):
    for path in _attempt_paths(files):
        assert spoof["docs"][path]  # ingested, so the claim was read and had its chance
        _assert_no_gain(spoof, path)


def test_spoof_pull_request_merged_by_unknown_person_gains_no_trust(spoof):
    links = spoof["links"](MERGED_BY_UNKNOWN)
    assert [(v["method"], v["verifier_email"], v["tier"]) for v in links] == [
        ("merge", "mallory@evil.example", "unknown")
    ]  # kept in the chain, with no authority
    _assert_no_gain(spoof, MERGED_BY_UNKNOWN)


def test_spoof_unknown_and_forged_trailers_stay_in_the_chain_as_unknown(spoof):
    unknown = spoof["links"]("unknown-reviewer.md")
    assert {(v["verifier_email"], v["tier"]) for v in unknown} == {("mallory@evil.example", "unknown")}
    assert all("no authority" in v["detail"] for v in unknown)
    forged = spoof["links"]("name-forged.md")
    assert sorted(v["verifier_email"] for v in forged) == [
        "ada-mf.example@evil.example",
        "ada@evil.example",
        "ada@mf.example.evil.com",
    ]
    assert {v["verifier"] for v in forged} == {"Ada Lovelace"} and {v["tier"] for v in forged} == {"unknown"}


def test_spoof_signed_off_by_and_signature_text_make_no_link(spoof):
    assert spoof["links"]("signer-claim.md") == []


def test_spoof_in_repo_ledger_is_never_read_but_the_operators_is(spoof):
    assert not any(v["method"] == "ledger" for v in spoof["t"]["verifications"])
    # Control: the same vouching from the operator's ledger does count.
    ledger = [LedgerEntry("spoof", "in-repo-ledger.md", spoof["head"], "ada@mf.example", note="operator")]
    again = ingest_source(spoof["source"], spoof["tmp"] / "data2", spoof["ids"], ledger, POLICY, approx_token_count)
    rows = [v for v in again.tables["verifications"].to_pylist() if v["method"] == "ledger"]
    assert [(v["verifier_email"], v["tier"], v["stale"]) for v in rows] == [("ada@mf.example", "foundation", False)]


def test_spoof_front_matter_is_kept_as_evidence_not_authority(spoof):
    assert '"tier": "foundation"' in spoof["docs"]["fm.md"]["front_matter"]  # stored, visible, powerless


def test_control_a_listed_reviewer_does_verify(spoof):
    links = spoof["links"](CONTROL)
    assert [(v["verifier"], v["publisher"], v["tier"]) for v in links] == [("Ada Lovelace", "mf", "foundation")]
    attr = spoof["attr"][spoof["docs"][CONTROL]["doc_id"]]
    assert attr["tier"] == "community"  # a foundation review verifies; it does not re-attribute
    # An unsigned trailer is claimed evidence: in a community repository it counts as community evidence.
    assert [v["evidence_class"] for v in links] == ["claimed"]
    vf = verification_factor(links, POLICY, attr["tier"])
    assert (vf.status, vf.multiplier) == ("verified", POLICY.verification.tiers.community)


def test_every_document_of_the_spoofing_repository_keeps_the_operators_publisher(spoof):
    assert len(spoof["docs"]) >= len(ATTEMPTS) + 2
    assert {(a["publisher"], a["tier"]) for a in spoof["t"]["attribution"]} == {("com", "community")}
    assert {r["status"] for r in spoof["t"]["ingest_report"]} <= {"ingested", "failed"}
    assert Path(spoof["source"].url).is_dir()
