"""Verification chains from trailers, pull-request merges and the ledger; staleness."""

from datetime import UTC, datetime

from tests.kits.gitutil import RepoBuilder
from trustindex.crawl.git import ensure_mirror, resolve_ref
from trustindex.crawl.history import file_histories, read_log
from trustindex.extractors.verification import chain_for_file, merge_owners, parse_trailers
from trustindex.ingest.context import is_substantive
from trustindex.query.trust import verification_factor
from trustindex.schemas.config import Identities, Person, Publisher
from trustindex.schemas.policy import Policy


def ids() -> Identities:
    i = Identities()
    i.publishers["mf"] = Publisher("mf", "MF", "foundation")
    for p in (Person("Ada Lovelace", ("ada@mf.example",), "mf"), Person("Priya", ("priya@mf.example",), "mf")):
        i.add_person(p)
    return i


def test_trailers_only_from_the_last_paragraph():
    msg = (
        "Fix\n\nReviewed-by: Fake <fake@x.example> in the body\n\nReviewed-by: Ada <ada@mf.example>\n"
        "Tested-by: Bob <bob@x.example>\nSigned-off-by: bot <bot@x.example>\n"
    )
    assert parse_trailers(msg) == [("Reviewed-By", "Ada", "ada@mf.example"), ("Tested-By", "Bob", "bob@x.example")]
    assert parse_trailers("Reviewed-by: Ada <ada@mf.example>") == []  # a subject line is not a trailer


def build_history(tmp_path):
    b = RepoBuilder(tmp_path / "src")
    b.commit(
        {"docs/a.md": "# A\n\nfirst\n", "docs/b.md": "# B\n\nb\n"}, "init\n\nReviewed-by: Priya <priya@mf.example>"
    )
    b.merge(
        [
            {
                "files": {"docs/a.md": "# A\n\nsecond version\n"},
                "message": "edit a\n\nAcked-by: Eve <eve@x.example>",
                "author": ("Jo", "jo@x.example"),
            }
        ],
        title="edit-a",
        merger=("Ada Lovelace", "ada@mf.example"),
        pr=7,
    )
    b.commit({"docs/b.md": "# B\n\nb changed later\n"}, "edit b without review")
    m = ensure_mirror(str(b.path), tmp_path / "m.git")
    head = resolve_ref(m, "main")
    commits = read_log(m, head)
    return m, commits


def links_for(m, commits, path):
    hist = file_histories(commits)[path]
    subst = {c.sha: is_substantive(m, c, path, 100, {}) for c in hist.touches}
    return chain_for_file(hist.touches, subst, merge_owners(commits), ids(), {})


def test_merge_and_trailer_links(tmp_path):
    m, commits = build_history(tmp_path)
    links = {(l.method, l.verifier_email): l for l in links_for(m, commits, "docs/a.md")}
    merge = links[("merge", "ada@mf.example")]
    assert merge.tier == "foundation" and not merge.stale and "#7" in merge.detail
    assert links[("trailer", "eve@x.example")].tier == "unknown"  # not in identities: no authority
    assert links[("trailer", "priya@mf.example")].stale  # a.md changed after the reviewed commit


def test_change_after_review_is_stale_and_gives_no_boost(tmp_path):
    m, commits = build_history(tmp_path)
    links = links_for(m, commits, "docs/b.md")
    (review,) = [l for l in links if l.method == "trailer"]
    assert review.stale
    rows = [
        dict(
            verifier=l.verifier,
            verifier_email=l.verifier_email,
            publisher=l.publisher,
            tier=l.tier,
            method=l.method,
            commit=l.commit,
            date=l.date,
            stale=l.stale,
            detail=l.detail,
        )
        for l in links
    ]
    f = verification_factor(rows, Policy.default(), "foundation")
    assert f.status == "stale" and f.multiplier == Policy.default().verification.stale


def test_unknown_verifiers_do_not_verify():
    rows = [
        dict(
            verifier="Ada Lovelace",
            verifier_email="ada@evil.example",
            publisher="",
            tier="unknown",
            method="trailer",
            commit="c",
            date=datetime.now(UTC),
            stale=False,
            detail="",
        )
    ]
    assert verification_factor(rows, Policy.default(), "foundation").status == "unverified"


def test_signed_commits_and_tags_become_signature_links(tmp_path):
    """Through ingest: a commit and a tag signed with a key the operator lists verify; a stranger's do not."""
    import shutil

    import pytest

    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen (openssh-client) missing")
    from tests.kits.sigkit import keygen, run
    from trustindex.extractors.base import approx_token_count
    from trustindex.ingest.source import ingest_source
    from trustindex.schemas.config import Source

    key, pub = keygen(tmp_path, "ada_key")
    stranger, _ = keygen(tmp_path, "stranger_key")
    src = tmp_path / "src"
    src.mkdir()
    run(src, "init", "-q", "-b", "main")
    (src / "a.md").write_text("# A\n\nsigned by Ada\n")
    (src / "b.md").write_text("# B\n\nsigned by a stranger\n")
    run(src, "add", "a.md")
    run(
        src,
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@mf.example",
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={key}",
        "commit",
        "-q",
        "-S",
        "-m",
        "a",
        when=1_700_000_000,
    )
    run(src, "add", "b.md")
    run(
        src,
        "-c",
        "user.name=X",
        "-c",
        "user.email=x@x.example",
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={stranger}",
        "commit",
        "-q",
        "-S",
        "-m",
        "b",
        when=1_700_000_100,
    )
    run(
        src,
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@mf.example",
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={key}",
        "tag",
        "-s",
        "-m",
        "release",
        "v1",
        when=1_700_000_200,
    )
    i = ids()
    ada = Person("Ada Lovelace", ("ada@mf.example",), "mf", (pub,))
    i.people = [ada]
    i._by_email = {"ada@mf.example": ada}
    source = Source(name="s", url=str(src), ref="main", publisher="mf", include=("**/*.md",))
    result = ingest_source(source, tmp_path / "data", i, [], Policy.default(), approx_token_count)
    docs = {r["doc_id"]: r["path"] for r in result.tables["documents"].to_pylist()}
    sig = {
        (docs[r["doc_id"]], r["detail"])
        for r in result.tables["verifications"].to_pylist()
        if r["method"] == "signature" and r["tier"] == "foundation" and not r["stale"]
    }
    assert ("a.md", "signed tag v1") in sig and ("b.md", "signed tag v1") in sig
    commit_links = {p for p, d in sig if not d.startswith("signed tag")}
    assert commit_links == {"a.md"}  # the stranger's signature on b.md vouches for nothing
