"""Platform-signed merges and OpenPGP signatures, verified by git against the operator's keys only.

One community repository, written commit by commit with real keys: gpg keys play GitHub's web-flow key
(the platform), a foundation person (Ada), a stranger nobody lists, a person whose key the operator lists
with its revocation certificate (Rita) and a key that expired after signing.  The operator's identities
list the platform with its committer identity and key.  A merge or squash the platform's key signed
makes its recorded author an authenticated merger; the same merge without that signature (or signed by
another key) is claimed, and its detail says why.  OpenPGP signatures go through a private GnuPG home:
the signing home's keys and agent are never used to verify.
"""

from __future__ import annotations

import shutil
import time

import pytest

from tests.kits.sigkit import IDENTITIES, GpgHome, SignedRepo
from trustindex.crawl.git import ensure_mirror
from trustindex.crawl.keyring import operator_keyring
from trustindex.crawl.signatures import commit_signatures, tag_signatures
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.query.trust import verification_factor
from trustindex.schemas.config import Source, load_identities
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import Policy

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg (gnupg) missing")

POLICY = Policy.default()
TIERS = POLICY.verification.tiers
GITHUB = "GitHub <noreply@github.com>"
ADA = "Ada Lovelace <ada@mf.example>"
EVE = "Eve <eve@evil.example>"


def toml_list(blocks: list[str]) -> str:
    return "[" + ", ".join(f"'''{b.strip()}'''" for b in blocks) + "]"


@pytest.fixture(scope="module")
def world(tmp_path_factory, request):
    tmp = tmp_path_factory.mktemp("gpg")
    home = GpgHome(tmp / "signer")
    request.addfinalizer(home.close)  # the signing agent, however the fixture ends
    keys = {
        "platform": home.new_key(GITHUB),
        "ada": home.new_key(ADA),
        "stranger": home.new_key("Mallory <mallory@evil.example>"),
        "rita": home.new_key("Rita <rita@mf.example>"),
        "old": home.new_key("Olga <olga@mf.example>", "seconds=3"),
    }
    (tmp / "identities.toml").write_text(
        IDENTITIES
        + f"""gpg_keys = {toml_list([keys["ada"].public])}

[[person]]
name = "Rita"
emails = ["rita@mf.example"]
publisher = "mf"
gpg_keys = {toml_list([keys["rita"].public, keys["rita"].revocation])}

[[person]]
name = "Olga"
emails = ["olga@mf.example"]
publisher = "mf"
gpg_keys = {toml_list([keys["old"].public])}

[[platform]]
name = "GitHub"
committer = "{GITHUB}"
gpg_keys = {toml_list([keys["platform"].public])}
"""
    )
    ids = load_identities(tmp / "identities.toml")
    repo = SignedRepo(tmp / "repo")
    tree = {"README.md": "# Owls\n"}
    t = 1736155800
    c: dict[str, str] = {}

    def commit(name, files, message, author=EVE, **kw):
        nonlocal t
        t += 86400
        tree.update(files)
        c[name] = repo.signed_commit(dict(tree), message, author, t, **kw)

    def merge(name, pr, page, sign=None, committer=GITHUB):
        base = repo.git("rev-parse", "main").decode().strip()
        commit(f"{name}-side", {page: f"# {page}\n\nBody.\n"}, f"Add {page}", parents=[base], ref=f"refs/heads/pr{pr}")
        message = f"Merge pull request #{pr} from owls/{name}\n\nAdd {page}"
        commit(name, {}, message, ADA, committer=committer, parents=[base, c[f"{name}-side"]], sign=sign)

    commit("init", {}, "Initial")
    merge("platform-merge", 1, "signed-merge.md", sign=keys["platform"].sign)
    merge("unsigned-merge", 2, "unsigned-merge.md")
    merge("stranger-merge", 3, "stranger-merge.md", sign=keys["stranger"].sign)
    commit(
        "squash",
        {"squash.md": "# Squash\n\nBody.\n"},
        "Add squash page (#4)",
        ADA,
        committer=GITHUB,
        sign=keys["platform"].sign,
    )
    commit("fake-squash", {"fake-squash.md": "# Fake\n\nBody.\n"}, "Add fake page (#5)", ADA, committer=GITHUB)
    commit("ada", {"ada.md": "# Ada\n\nBody.\n"}, "Ada signs in a community repository", EVE, sign=keys["ada"].sign)
    commit("rita", {"rita.md": "# Rita\n\nBody.\n"}, "Signed with a revoked key", EVE, sign=keys["rita"].sign)
    commit("old", {"old.md": "# Old\n\nBody.\n"}, "Signed with a key that expires", EVE, sign=keys["old"].sign)
    commit(
        "tampered",
        {"tampered.md": "# Tampered\n\nBody.\n"},
        "Reviewed text",
        EVE,
        sign=keys["ada"].sign,
        tamper=lambda body: body.replace(b"Reviewed text", b"Reviewed textual"),
    )
    commit(
        "platform-person",
        {"web-edit.md": "# Web\n\nBody.\n"},
        "Edit on the web",
        ADA,
        committer=GITHUB,
        sign=keys["platform"].sign,
    )
    repo.signed_tag("v1", c["ada"], ADA, t + 3600, keys["ada"].sign)
    repo.signed_tag("v0", c["init"], "Mallory <mallory@evil.example>", t + 1800, keys["stranger"].sign)
    repo.signed_tag("v-platform", c["init"], GITHUB, t + 900, keys["platform"].sign)
    home.close()
    time.sleep(4)  # let Olga's 3-second key expire
    source = Source("owls", str(repo.path), "main", "com", include=("**/*.md",))
    result = ingest_source(source, tmp / "data", ids, [], POLICY, approx_token_count)
    tables = {name: tab.to_pylist() for name, tab in result.tables.items()}
    docs = {d["path"]: d["doc_id"] for d in tables["documents"]}
    links = {p: [v for v in tables["verifications"] if v["doc_id"] == d] for p, d in docs.items()}
    return {"tmp": tmp, "ids": ids, "repo": repo, "c": c, "links": links, "signer_home": home.home}


def only(links, method):
    """The one link of ``method`` made from the page's own history (signed tags vouch for every page)."""
    [link] = [v for v in links if v["method"] == method and not v["detail"].startswith("signed tag")]
    return link


def test_checks_through_a_private_keyring(world):
    c = world["c"]
    mirror = ensure_mirror(str(world["repo"].path), world["tmp"] / "mirror.git")
    names = ["platform-merge", "unsigned-merge", "stranger-merge", "squash", "ada", "rita", "old", "tampered"]
    with operator_keyring(world["ids"], world["tmp"] / "signers") as keyring:
        checks = commit_signatures(mirror, [c[n] for n in names], keyring)
        tags = {t.tag: (t.status, t.principal) for t in tag_signatures(mirror, keyring)}
        home = keyring.gnupghome
        assert home is not None and home != world["signer_home"]
        assert "no-auto-key-retrieve" in (home / "gpg.conf").read_text()
    assert not home.exists()  # removed after the run
    got = {n: (checks[c[n]].status, checks[c[n]].principal) for n in names}
    assert got == {
        "platform-merge": ("good", "noreply@github.com"),
        "unsigned-merge": ("none", ""),
        "stranger-merge": ("unknown_key", ""),
        "squash": ("good", "noreply@github.com"),
        "ada": ("good", "ada@mf.example"),
        "rita": ("revoked", ""),
        "old": ("expired", ""),
        "tampered": ("bad", ""),
    }
    assert tags == {
        "v1": ("good", "ada@mf.example"),
        "v0": ("unknown_key", ""),
        "v-platform": ("good", "noreply@github.com"),
    }


def test_a_merge_the_platform_signed_authenticates_its_recorded_author(world):
    link = only(world["links"]["signed-merge.md"], "merge")
    assert (link["verifier"], link["tier"], link["evidence_class"]) == ("Ada Lovelace", "foundation", "authenticated")
    assert "signed by platform GitHub's listed key" in link["detail"]
    vf = verification_factor([link], POLICY, "community")  # a community repository: the platform vouches anyway
    assert (vf.status, vf.multiplier) == ("verified", TIERS.foundation)
    assert vf.evidence.best.evidence_class == "authenticated"


def test_a_squash_the_platform_signed_authenticates_its_author(world):
    link = only(world["links"]["squash.md"], "merge")
    assert (link["tier"], link["evidence_class"]) == ("foundation", "authenticated")
    assert link["detail"].startswith("squash-merged pull request #4")


@pytest.mark.parametrize(
    "page,why",
    [
        ("unsigned-merge.md", "committer claims platform GitHub, no signature"),
        ("stranger-merge.md", "committer claims platform GitHub, signed by a key the operator does not list"),
        ("fake-squash.md", "committer claims platform GitHub, no signature"),
    ],
)
def test_a_commit_claiming_to_be_the_platforms_without_its_signature_is_claimed(world, page, why):
    link = only(world["links"][page], "merge")
    assert (link["tier"], link["evidence_class"]) == ("foundation", "claimed")
    assert why in link["detail"]
    vf = verification_factor([link], POLICY, "community")
    assert vf.multiplier == TIERS.community  # never the foundation's
    strict = Policy.from_dict({"verification": {"require_authenticated": True}})
    assert verification_factor([link], strict, "community").status == "unverified"


def test_a_listed_persons_gpg_signature_in_another_publishers_repository(world):
    link = only(world["links"]["ada.md"], "signature")
    assert (link["verifier"], link["tier"], link["evidence_class"]) == ("Ada Lovelace", "foundation", "authenticated")
    tag = [v for v in world["links"]["ada.md"] if "signed tag v1" in v["detail"]]
    assert tag and tag[0]["evidence_class"] == "authenticated"
    # The platform's key attests merges, not releases: its signed tag vouches for nothing.
    assert not any("v-platform" in v["detail"] for links in world["links"].values() for v in links)


@pytest.mark.parametrize(
    "page,why",
    [
        ("rita.md", "signed by a revoked key"),
        ("old.md", "signed by an expired key"),
        ("tampered.md", "bad signature"),
    ],
)
def test_signatures_that_do_not_verify_say_why_and_give_nothing(world, page, why):
    link = only(world["links"][page], "signature")
    assert (link["tier"], link["evidence_class"]) == ("unknown", "claimed")
    assert why in link["detail"] and "no authority" in link["detail"]
    assert verification_factor([link], POLICY, "community").status == "unverified"


def test_the_platforms_signature_on_an_ordinary_commit_is_no_review(world):
    # A web edit the platform signed: its author is recorded, but no merge or review happened.
    assert [v for v in world["links"]["web-edit.md"] if not v["detail"].startswith("signed tag")] == []


def _identities(tmp, body: str):
    (tmp / "ids.toml").write_text('[[publisher]]\nid = "mf"\ntier = "foundation"\n' + body)
    return load_identities(tmp / "ids.toml")


@pytest.mark.parametrize(
    "body,key,problem",
    [
        (
            '[[platform]]\nname = "GH"\ncommitter = "noreply@github.com"\ngpg_keys = ["x"]\n',
            "committer",
            "Name <address>",
        ),
        ('[[platform]]\nname = "GH"\ncommitter = "GH <n@gh.example>"\n', "platform[GH]", "needs its key"),
        (
            '[[platform]]\nname = "GH"\ncommitter = "GH <n@gh.example>"\ngpg_keys = ["not a key"]\n',
            "gpg_keys[0]",
            "armored",
        ),
        (
            '[[platform]]\nname = "GH"\ncommitter = "GH <n@gh.example>"\nattests = ["review"]\n'
            'signing_keys = ["ssh-ed25519 AAAA"]\n',
            "attests",
            "merge, squash",
        ),
        (
            '[[person]]\nname = "A"\nemails = ["n@gh.example"]\npublisher = "mf"\n'
            '[[platform]]\nname = "GH"\ncommitter = "GH <n@gh.example>"\nsigning_keys = ["ssh-ed25519 AAAA"]\n',
            "committer",
            "already a person's",
        ),
    ],
)
def test_platform_configuration_errors_name_the_key(tmp_path, body, key, problem):
    with pytest.raises(ConfigError) as e:
        _identities(tmp_path, body)
    assert key in str(e.value) and problem in str(e.value) and "ids.toml" in str(e.value)


def test_keys_are_part_of_the_source_context(world, tmp_path):
    """Listing, changing or removing a platform's or a person's OpenPGP key rebuilds the source's tables."""
    from dataclasses import replace

    from trustindex.ingest.keys import context_key

    ids, source = world["ids"], Source("owls", str(world["repo"].path), "main", "com")
    base = context_key(source, ids, [], POLICY)
    without_platform = replace(ids, platforms=[])
    other_attests = replace(ids, platforms=[replace(ids.platforms[0], attests=("squash",))])
    no_person_key = replace(ids, people=[replace(p, gpg_keys=()) for p in ids.people])
    keys = {context_key(source, x, [], POLICY) for x in (without_platform, other_attests, no_person_key)}
    assert base not in keys and len(keys) == 3
