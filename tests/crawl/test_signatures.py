"""Commit and tag signatures checked by git against the operator's allowed signers (crawl/signatures.py).

Real repositories, real ed25519 keys from ssh-keygen, commits and tags signed by
the git CLI; forged objects (a tampered signed commit, a fake PGP signature) are
written with ``git hash-object``.  The source repository's own config names a
marker script for every signature program and its own allowed-signers file:
neither may run nor count, whether the mirror or the source itself is checked.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from tests.kits.sigkit import keygen, run
from trustindex.crawl import signatures as sig
from trustindex.crawl.git import ensure_mirror
from trustindex.crawl.history import file_histories, read_log
from trustindex.schemas.config import load_identities

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (openssh-client) missing")


def forge(repo: Path, kind: str, sha: str, edit) -> str:
    """Write a modified copy of an object (what a hostile repository can push)."""
    raw = run(repo, "cat-file", kind, sha) + "\n"
    return run(repo, "hash-object", "-t", kind, "-w", "--stdin", stdin=edit(raw).encode())


FAKE_PGP = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iHUEABYKAB0WIQQ=\n -----END PGP SIGNATURE-----\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sig")
    ka, ka_pub = keygen(tmp, "ada_key")
    kb, kb_pub = keygen(tmp, "bob_key")
    kx, kx_pub = keygen(tmp, "stranger_key")
    (tmp / "identities.toml").write_text(f"""
[[publisher]]
id = "mf"
tier = "foundation"
[[person]]
name = "Ada Lovelace"
emails = ["ada@mf.example", "Ada.L@MF.example"]
publisher = "mf"
signing_keys = ["{ka_pub}"]
[[person]]
name = "Bob"
emails = ["bob@mf.example"]
publisher = "mf"
signing_keys = ["{kb_pub}"]
""")
    ids = load_identities(tmp / "identities.toml")
    allowed = sig.Keyring.ssh(sig.allowed_signers_file(ids, tmp / "conf"))

    src = tmp / "src"
    src.mkdir()
    run(src, "init", "-q", "-b", "main")
    t = 1736000000
    c = {}

    def commit(name: str, text: str, message: str, author: str = "ada@mf.example", key: Path | None = None):
        nonlocal t
        t += 86400
        (src / "doc.md").write_text(text)
        run(src, "add", "doc.md")
        signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"] if key else []
        run(
            src,
            "-c",
            "user.name=Someone",
            "-c",
            f"user.email={author}",
            *signing,
            "commit",
            "-q",
            *(["-S"] if key else []),
            "-m",
            message,
            when=t,
        )
        c[name] = run(src, "rev-parse", "HEAD")

    commit("good", "# Doc\n\none\n", "Add doc", key=ka)
    commit("unlisted", "# Doc\n\ntwo\n", "Edit doc", key=kx)
    commit("unsigned", "# Doc\n\nthree\n", "Edit again")
    commit(
        "claim",
        "# Doc\n\nfour\n",
        "Edit\n\nSigned-by: Ada Lovelace <ada@mf.example>\nSigned-off-by: Ada Lovelace <ada@mf.example>\n",
    )
    commit("cross", "# Doc\n\nfive\n", "Bob's change, signed by Ada", author="bob@mf.example", key=ka)
    commit("bob", "# Doc\n\nsix\n", "Bob signs", author="bob@mf.example", key=kb)
    c["bad"] = forge(src, "commit", c["good"], lambda r: r.replace("Add doc", "Add doc (tampered)"))
    c["pgp"] = forge(src, "commit", c["unsigned"], lambda r: r.replace("\n\n", "\n" + FAKE_PGP + "\n", 1))
    run(src, "update-ref", "refs/heads/bad", c["bad"])
    run(src, "update-ref", "refs/heads/pgp", c["pgp"])

    def tag(name: str, target: str, key: Path | None, days: int):
        signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"] if key else []
        run(
            src,
            "-c",
            "user.name=Tagger",
            "-c",
            "user.email=t@mf.example",
            *signing,
            "tag",
            *(["-s"] if key else ["-a"]),
            "-m",
            f"release {name}",
            name,
            target,
            when=t + days * 3600,
        )

    tag("v-good", c["good"], ka, 1)
    tag("v-unlisted", c["unlisted"], kx, 2)
    tag("v-plain", c["unsigned"], None, 3)
    tag("v-nested", "v-good", None, 4)
    run(src, "tag", "light", c["claim"])
    bad_tag = forge(src, "tag", run(src, "rev-parse", "v-good"), lambda r: r.replace("release", "re1ease"))
    run(src, "update-ref", "refs/tags/v-bad", bad_tag)

    # Only now turn the source hostile (its programs would also have run for signing above):
    # every signature program is a marker script, and its own allowed-signers file vouches
    # for the stranger's key as Ada.
    marker = tmp / "ran"
    script = tmp / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    script.chmod(0o755)
    (tmp / "evil_signers").write_text(f'ada@mf.example namespaces="git" {kx_pub}\n')
    for key in ("gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program"):
        run(src, "config", key, str(script))
    run(src, "config", "gpg.ssh.allowedSignersFile", str(tmp / "evil_signers"))
    run(src, "config", "gpg.minTrustLevel", "ultimate")
    mirror = ensure_mirror(str(src), tmp / "mirror.git")
    return {
        "tmp": tmp,
        "ids": ids,
        "allowed": allowed,
        "c": c,
        "marker": marker,
        "mirror": mirror,
        "source": git.Repo(src),
        "pubs": (ka_pub, kb_pub, kx_pub),
    }


EXPECTED_COMMITS = [  # commit -> (status, principal)
    ("good", "good", "ada@mf.example"),
    ("unlisted", "unknown_key", ""),
    ("unsigned", "none", ""),
    ("claim", "none", ""),  # a "Signed-by:" line in the message is not a signature
    ("cross", "good", "ada@mf.example"),  # author is Bob, the signer is Ada
    ("bob", "good", "bob@mf.example"),
    ("bad", "bad", ""),  # Ada's signature over a message that was changed afterwards
    ("pgp", "none", ""),  # OpenPGP is not checked: gpg.program is ``false``, never the repo's
]


@pytest.mark.parametrize("where", ["mirror", "source"])
def test_commit_signatures(world, where):
    repo = world[where]
    c = world["c"]
    checks = sig.commit_signatures(repo, [c[name] for name, _, _ in EXPECTED_COMMITS], world["allowed"])
    got = {name: (checks[c[name]].status, checks[c[name]].principal) for name, _, _ in EXPECTED_COMMITS}
    assert got == {name: (status, principal) for name, status, principal in EXPECTED_COMMITS}
    assert checks[c["good"]].fingerprint.startswith("SHA256:")
    assert checks[c["unlisted"]].fingerprint.startswith("SHA256:")  # kept as evidence of who signed
    assert checks[c["good"]].fingerprint == checks[c["cross"]].fingerprint != checks[c["bob"]].fingerprint
    assert not world["marker"].exists(), "a program named by the repository's config ran"


def test_commit_signatures_chunks_and_rejects_non_shas(world, monkeypatch):
    c = world["c"]
    names = [n for n, _, _ in EXPECTED_COMMITS]
    whole = sig.commit_signatures(world["mirror"], [c[n] for n in names], world["allowed"])
    monkeypatch.setattr(sig, "CHUNK", 3)
    assert sig.commit_signatures(world["mirror"], [c[n] for n in names], world["allowed"]) == whole
    for bad in ("--output=/tmp/x", "HEAD", c["good"][:12], c["good"] + " " + c["bob"]):
        with pytest.raises(sig.SignatureError, match="not a full commit sha"):
            sig.commit_signatures(world["mirror"], [bad], world["allowed"])
    with pytest.raises(sig.SignatureError, match="git log failed"):
        sig.commit_signatures(world["mirror"], ["0" * 40], world["allowed"])
    assert sig.commit_signatures(world["mirror"], [], world["allowed"]) == {}


EXPECTED_TAGS = {  # tag -> (status, principal, peeled commit)
    "v-good": ("good", "ada@mf.example", "good"),
    "v-unlisted": ("unknown_key", "", "unlisted"),
    "v-plain": ("none", "", "unsigned"),
    "v-nested": ("none", "", "good"),  # an unsigned tag of a signed tag: its own signature is what counts
    "v-bad": ("bad", "", "good"),
}


@pytest.mark.parametrize("where", ["mirror", "source"])
def test_tag_signatures(world, where):
    c = world["c"]
    tags = sig.tag_signatures(world[where], world["allowed"])
    got = {t.tag: (t.status, t.principal, t.commit) for t in tags}
    assert got == {name: (s, p, c[commit]) for name, (s, p, commit) in EXPECTED_TAGS.items()}  # no "light"
    dates = [t.date for t in tags]
    assert dates == sorted(dates, reverse=True) and all(d.year == 2025 for d in dates)
    assert not world["marker"].exists(), "a program named by the repository's config ran"


def test_tag_signatures_bounded(world, monkeypatch):
    monkeypatch.setattr(sig, "MAX_TAGS", 2)
    assert [t.tag for t in sig.tag_signatures(world["mirror"], world["allowed"])] == ["v-nested", "v-plain"]


def test_allowed_signers_file_lines(world):
    ka_pub, kb_pub, _ = world["pubs"]
    strip = lambda k: " ".join(k.split()[:2])  # noqa: E731 - comments are not written
    assert world["allowed"].allowed.read_text().splitlines() == [
        f'ada@mf.example namespaces="git" {strip(ka_pub)}',
        f'ada.l@mf.example namespaces="git" {strip(ka_pub)}',
        f'bob@mf.example namespaces="git" {strip(kb_pub)}',
    ]


def _ids(tmp: Path, people: list[tuple[str, list[str], list[str]]]):
    body = '[[publisher]]\nid = "mf"\ntier = "foundation"\n'
    for name, emails, keys in people:
        body += f'[[person]]\nname = "{name}"\nemails = {emails!r}\npublisher = "mf"\nsigning_keys = {keys!r}\n'
    (tmp / "ids.toml").write_text(body.replace("'", '"'))
    return load_identities(tmp / "ids.toml")


def _wrong_type(pub: str) -> str:
    return "ssh-rsa " + pub.split()[1]


ALLOWED_CASES = [  # (case, people(ka, kb) -> [(name, emails, keys)], expected principals (None: no file))
    ("nobody has keys", lambda ka, kb: [("A", ["a@x.org"], [])], None),
    (
        "malformed keys skipped",
        lambda ka, kb: [
            ("A", ["a@x.org"], ["garbage", "ssh-ed25519 not*base64", _wrong_type(ka), "ssh-ed25519 " + "QUJD", ka])
        ],
        ["a@x.org"],
    ),
    ("only malformed keys", lambda ka, kb: [("A", ["a@x.org"], ["ssh-ed25519 AAAA"])], None),
    (
        "pattern e-mails skipped",
        lambda ka, kb: [("A", ["*@x.org", "a,b@x.org", "a @x.org", "!a@x.org", "a@x.org"], [ka])],
        ["a@x.org"],
    ),
    (
        "key shared by two persons skipped",
        lambda ka, kb: [("A", ["a@x.org"], [ka, kb]), ("B", ["b@x.org"], [ka])],
        ["a@x.org"],
    ),
]


@pytest.mark.parametrize("case,people,expected", ALLOWED_CASES, ids=[c[0] for c in ALLOWED_CASES])
def test_allowed_signers_file_validation(world, tmp_path, case, people, expected):
    ka, kb, _ = world["pubs"]
    path = sig.allowed_signers_file(_ids(tmp_path, people(ka, kb)), tmp_path / "out")
    if expected is None:
        assert path is None
        return
    lines = path.read_text().splitlines()
    assert [ln.split()[0] for ln in lines] == expected
    assert all(ln.split()[1] == 'namespaces="git"' for ln in lines)
    # ssh-keygen itself must accept the file: a commit signed by a listed key verifies against it.
    if case == "key shared by two persons skipped":
        assert all(" ".join(ka.split()[:2]) not in ln for ln in lines)  # ka was ambiguous
        good = sig.commit_signatures(world["mirror"], [world["c"]["bob"]], sig.Keyring.ssh(path))[world["c"]["bob"]]
        assert (good.status, good.principal) == ("good", "a@x.org")


STALENESS = [  # (case, substantive touches, expected (commit, principal, stale) links)
    (
        "everything substantive",
        {"good", "unlisted", "unsigned", "claim", "cross", "bob"},
        [("bob", "bob@mf.example", False), ("cross", "ada@mf.example", True), ("good", "ada@mf.example", True)],
    ),
    (
        "only the signed commits substantive",
        {"good", "cross", "bob"},
        [("bob", "bob@mf.example", False), ("cross", "ada@mf.example", True), ("good", "ada@mf.example", True)],
    ),
    (
        "later touches cosmetic",
        {"good"},
        [("bob", "bob@mf.example", False), ("cross", "ada@mf.example", False), ("good", "ada@mf.example", False)],
    ),
    (
        "one substantive touch after cross",
        {"bob"},
        [("bob", "bob@mf.example", False), ("cross", "ada@mf.example", True), ("good", "ada@mf.example", True)],
    ),
    (
        "substantive between good and cross",
        {"unsigned"},
        [("bob", "bob@mf.example", False), ("cross", "ada@mf.example", False), ("good", "ada@mf.example", True)],
    ),
]


@pytest.mark.parametrize("case,subst,expected", STALENESS, ids=[s[0] for s in STALENESS])
def test_signature_links_staleness(world, case, subst, expected):
    c = world["c"]
    by_sha = {v: k for k, v in c.items()}
    touches = file_histories(read_log(world["mirror"], c["bob"]))["doc.md"].touches
    assert [by_sha[t.sha] for t in touches] == ["bob", "cross", "claim", "unsigned", "unlisted", "good"]
    checks = sig.commit_signatures(world["mirror"], [t.sha for t in touches], world["allowed"])
    every = sig.signature_links(touches, {c[n]: True for n in subst}, checks, world["ids"])
    links = [ln for ln in every if ln.evidence_class == "authenticated"]
    assert [(by_sha[ln.commit], ln.verifier_email, ln.stale) for ln in links] == expected
    # The stranger's signature stays in the chain, claimed and powerless, saying why.
    [unlisted] = [ln for ln in every if ln.evidence_class != "authenticated"]
    assert (by_sha[unlisted.commit], unlisted.tier, unlisted.evidence_class) == ("unlisted", "unknown", "claimed")
    assert "a key the operator does not list" in unlisted.detail
    for ln in links:
        assert ln.method == "signature" and ln.tier == "foundation" and ln.publisher == "mf"
        assert ln.verifier == ("Bob" if ln.verifier_email == "bob@mf.example" else "Ada Lovelace")
        assert isinstance(ln.date, datetime) and ln.date.tzinfo is not None


def test_signature_links_ignore_everything_but_good(world):
    c = world["c"]
    touches = file_histories(read_log(world["mirror"], c["bob"]))["doc.md"].touches
    forged = {
        t.sha: sig.SignatureCheck(s, "ada@mf.example", "SHA256:x")
        for t, s in zip(touches, ["unknown_key", "bad", "none", "error", "expired", "revoked"], strict=True)
    }
    links = sig.signature_links(touches, {}, forged, world["ids"])
    assert [ln.tier for ln in links] == ["unknown"] * 5  # "none" is no signature: no link
    assert all(ln.evidence_class == "claimed" and "no authority" in ln.detail for ln in links)
    assert [ln.detail.split(": ")[1].split(" (")[0] for ln in links] == [
        "signed by a key the operator does not list",
        "bad signature",
        "the signature could not be checked",
        "signed by an expired key",
        "signed by a revoked key",
    ]
    # A good check naming an address the operator does not list carries no authority.
    stranger = {touches[0].sha: sig.SignatureCheck("good", "eve@evil.example", "SHA256:x")}
    [link] = sig.signature_links(touches, {}, stranger, world["ids"])
    assert link.tier == "unknown" and "no authority" in link.detail
    assert link.date == datetime.fromtimestamp(1736000000 + 6 * 86400, UTC)
