"""The demo corpus (examples/build_demo.py + examples/demo/): deterministic repositories that carry the
trust evidence later stages extract. Tests are grouped by the promise they check."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import re
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _load_builder():
    """Import examples/build_demo.py by path: examples/ is not a package, and the script must work alone."""
    spec = importlib.util.spec_from_file_location("demo_corpus_builder", EXAMPLES / "build_demo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


bd = _load_builder()
EARLIEST = datetime(2024, 1, 1, tzinfo=UTC)
LATEST = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("demo")
    assert bd.build_demo(d) == d / "sources.toml"
    return d


def repo(out: Path, name: str) -> git.Repo:
    return git.Repo(out / "repos" / name)


def history(r: git.Repo) -> list[git.Commit]:
    return list(r.iter_commits("main"))


def by_id(out: Path, name: str, cid: str) -> git.Commit:
    """The commit built from spec entry ``cid``, found by its unique message."""
    spec = {c["id"]: c for c in bd.load_history(name)["commit"]}
    msg = spec[cid]["message"].strip() + "\n"
    hits = [c for c in repo(out, name).iter_commits("--all") if c.message == msg]
    assert len(hits) == 1, f"{name}:{cid} matched {len(hits)} commits"
    return hits[0]


def glob_match(path: str, pattern: str) -> bool:
    # fnmatch's "*" crosses "/", so "**/x" must also be tried without its "**/" for top-level files.
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.removeprefix("**/"))


def files_at(commit: git.Commit) -> dict[str, bytes]:
    return {b.path: b.data_stream.read() for b in commit.tree.traverse() if b.type == "blob"}


def all_refs(r: git.Repo) -> dict[str, str]:
    refs = {ref.path: ref.commit.hexsha for ref in r.refs}
    refs["history"] = ",".join(c.hexsha for c in r.iter_commits("--all"))
    return refs


# --- determinism, idempotency, layout ---------------------------------------------------------------


def test_rebuild_gives_identical_shas_and_replaces_existing_repos(out, tmp_path):
    first = {n: all_refs(repo(out, n)) for n in bd.REPOS}
    stray = tmp_path / "repos" / "partner-sdk" / "stray.txt"
    stray.parent.mkdir(parents=True)
    stray.write_text("left over from an old build")
    bd.build_demo(tmp_path)  # over an existing OUT_DIR/repos/<name>: removed and rebuilt
    for n in bd.REPOS:
        assert all_refs(repo(tmp_path, n)) == first[n], n
    assert not (tmp_path / "repos" / "partner-sdk" / "stray.txt").exists()


@pytest.mark.parametrize("name", bd.REPOS)
def test_repo_is_a_clean_checkout_of_main(out, name):
    r = repo(out, name)
    assert not r.bare and r.head.reference.name == "main"
    assert not r.is_dirty(untracked_files=True)
    assert len(history(r)) >= 10


def test_config_files_copied_and_corpus_size(out):
    for f in ("sources.toml", "identities.toml", "verifications.toml"):
        assert (out / f).read_bytes() == (EXAMPLES / f).read_bytes()
    assert (out / "policy.toml").exists() == (EXAMPLES / "policy.toml").exists()
    total = sum(len(files_at(repo(out, n).head.commit)) for n in bd.REPOS)
    assert 40 <= total <= 64, total  # 64: the docs' sidebars.js and a _category_.json (issue 43)


def test_cli_entry_point_usage_error(capsys):
    assert bd.main([]) == 2
    assert "usage" in capsys.readouterr().err


# --- history: dates, merges, trailers, tag ------------------------------------------------------------


@pytest.mark.parametrize("name", bd.REPOS)
def test_dates_are_backdated_and_timezone_aware(out, name):
    offsets = set()
    for c in repo(out, name).iter_commits("--all"):
        for d in (c.authored_datetime, c.committed_datetime):
            assert d.tzinfo is not None and EARLIEST <= d <= LATEST, (c.hexsha, d)
        offsets.add(c.author_tz_offset)
    assert len(offsets) >= 2, "history should span several time zones"


MERGES = [  # (repo, message regex, how many, merger e-mails)
    ("midnight-docs", r"^Merge pull request #\d+ from midnightntwrk/\S+\n", 4, {"ada@midnight.example"}),
    ("partner-sdk", r"^Merge pull request #\d+ from lumen-labs/\S+\n", 1, {"marta@lumenlabs.example"}),
    (
        "community-contracts",
        r"^Merge pull request #\d+ from night-owls-community/\S+\n",
        2,
        {"rowan@nightowls.example", "ada@midnight.example"},
    ),
]
PLATFORM = "noreply@github.com"  # a platform-committed merge: its merger is the author it recorded


@pytest.mark.parametrize("name,pattern,count,mergers", MERGES)
def test_merge_commits_by_known_maintainers(out, name, pattern, count, mergers):
    merges = [c for c in history(repo(out, name)) if len(c.parents) == 2]
    assert len(merges) == count
    for m in merges:
        assert re.match(pattern, m.message), m.message
        assert (m.author.email if m.committer.email == PLATFORM else m.committer.email) in mergers


def test_platform_signed_merge_is_authenticated_next_to_a_claimed_trailer(out):
    """The demo's platform-signed merge: authenticated foundation evidence in a community repository, beside
    an unsigned trailer in the same person's name that counts only as community evidence."""
    from trustindex.extractors.base import approx_token_count
    from trustindex.ingest.source import ingest_source
    from trustindex.query.trust import verification_factor
    from trustindex.schemas import config

    cfg = config.load_build_config(str(out / "sources.toml"))
    source = next(s for s in cfg.sources if s.name == "community-contracts")
    result = ingest_source(source, out / "verify-data", cfg.ids, cfg.ledger, cfg.policy, approx_token_count)
    doc = next(d for d in result.tables["documents"].to_pylist() if d["path"] == "docs/review-process.md")
    links = [v for v in result.tables["verifications"].to_pylist() if v["doc_id"] == doc["doc_id"]]
    assert sorted((v["method"], v["evidence_class"], v["tier"]) for v in links) == [
        ("merge", "authenticated", "foundation"),
        ("trailer", "claimed", "foundation"),
    ]
    vf = verification_factor(links, cfg.policy, "community")
    assert vf.evidence.best.evidence_class == "authenticated"
    assert vf.multiplier == cfg.policy.verification.tiers.foundation
    chain = {c.method: c for c in vf.evidence.chain}
    assert chain["trailer"].lends_tier == "community" and "claimed evidence" in chain["trailer"].note
    assert "signed by platform GitHub's listed key" in chain["merge"].detail
    # The merge of pull request #7 is unsigned and committed by its merger: claimed, as before.
    voting = next(d for d in result.tables["documents"].to_pylist() if d["path"] == "contracts/voting.compact")
    merge7 = [v for v in result.tables["verifications"].to_pylist() if v["doc_id"] == voting["doc_id"]]
    assert {(v["method"], v["evidence_class"]) for v in merge7} == {("merge", "claimed"), ("trailer", "claimed")}


TRAILERS = [  # (repo, trailer line that some commit on main must carry)
    ("midnight-docs", "Reviewed-by: Ada Lovelace <ada@midnight.example>"),
    ("midnight-docs", "Reviewed-by: Tomás Okafor <tomas.okafor@midnight.example>"),
    ("midnight-docs", "Acked-by: Priya Raman <priya@midnight.example>"),
    ("midnight-docs", "Tested-by: Priya Raman <priya@midnight.example>"),
    ("partner-sdk", "Tested-by: Marta Silva <marta@lumenlabs.example>"),
    ("partner-sdk", "Reviewed-by: Ada Lovelace <ada@midnight.example>"),
    ("community-contracts", "Reviewed-by: Sam Doe <sam.doe@random.example>"),
    ("community-contracts", "Reviewed-by: Ada Lovelace <ada.lovelace@spoof.example>"),
    ("community-contracts", "Signed-off-by: dependabot[bot] <support@dependabot.example>"),
]


@pytest.mark.parametrize("name,line", TRAILERS)
def test_trailers_present(out, name, line):
    assert any(line in c.message.splitlines() for c in history(repo(out, name)))


def test_review_tag_points_at_the_review_commit(out):
    r = repo(out, "midnight-docs")
    tag = r.tags["docs-review-2026-06"]
    assert tag.tag is None, "lightweight tag: no tagger date, so the build stays deterministic"
    assert tag.commit == by_id(out, "midnight-docs", "v1-review")
    assert tag.commit.committed_datetime.strftime("%Y-%m") == "2026-06"


def test_authors_include_known_and_unknown_people(out):
    ids = tomllib.loads((EXAMPLES / "identities.toml").read_text())
    known = {e for p in ids["person"] for e in p["emails"]}
    for name in bd.REPOS:
        authors = {c.author.email for c in history(repo(out, name))}
        assert authors & known, name
        assert authors - known, f"{name} should have at least one unknown contributor"
    docs_authors = {c.author.email for c in history(repo(out, "midnight-docs"))}
    assert len(docs_authors & known) >= 3


# --- freshness traps: bulk, whitespace-only and front-matter-only commits -------------------------------


def _diff(out, cid):
    c = by_id(out, "midnight-docs", cid)
    before, after = files_at(c.parents[0]), files_at(c)
    return before, after, sorted(p for p in after if before.get(p) != after[p])


def test_bulk_commit_touches_every_markdown_file(out):
    before, after, changed = _diff(out, "bulk-license")
    md = sorted(p for p in after if p.endswith((".md", ".mdx")))
    assert len(md) >= 25 and set(md) <= set(changed)
    assert all(b"2024-2026 Midnight Foundation" in after[p] for p in md)


def test_whitespace_only_commit(out):
    before, after, changed = _diff(out, "whitespace-only")
    assert changed == ["docs/guides/testnet.md"]
    a, b = before[changed[0]].decode(), after[changed[0]].decode()
    assert a != b and re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


def test_front_matter_only_commit(out):
    before, after, changed = _diff(out, "front-matter-only")
    assert changed == ["docs/concepts/tokens.md"]
    split = lambda t: t.decode().split("\n---\n", 1)  # noqa: E731 - (front matter, body)
    (fa, ba), (fb, bb) = split(before[changed[0]]), split(after[changed[0]])
    assert fa != fb and ba == bb


def test_substantive_change_after_review_tag(out):
    r = repo(out, "midnight-docs")
    tagged, head = files_at(r.tags["docs-review-2026-06"].commit), files_at(r.head.commit)
    strip = lambda b: b.decode().rsplit("\n\n", 1)[0]  # noqa: E731 - drop the licence footer
    assert strip(tagged["docs/compact/witnesses.md"]) != strip(head["docs/compact/witnesses.md"])
    assert strip(tagged["docs/compact/circuits.md"]) == strip(head["docs/compact/circuits.md"])


# --- content markers that later stages extract ----------------------------------------------------------


def _head(out, name, path) -> str:
    return (out / "repos" / name / path).read_text(encoding="utf-8")


DOCS_MARKERS = [  # (path, text it must contain)
    ("docusaurus.config.js", "current: { label: 'v1' }"),
    ("docusaurus.config.js", "'0.1.0': { label: 'v0 (Legacy)', banner: 'unmaintained' }"),
    ("docs/guides/wallet-api.md", "\ndeprecated: true\n"),
    ("docs/guides/wallet-api.md", ":::warning Deprecated\nThe Wallet API is deprecated"),
    ("docs/compact/ledger-adt.md", "\n## Deprecated\n\nThe following operations"),
    ("docs/relnotes/compact-toolchain-0.31.0.md", "\n## Deprecations\n\nNone.\n"),
    ("docs/getting-started/installation.md", "Compact language version 0.23.0, compiler version 0.31.0"),
    ("docs/compact/language-reference.md", '\nlanguage_version: "0.23.0"\n'),
    ("docs/_partials/_proof-server-ports.md", "port 6300"),
    ("blog/2026-02-10-testnet-reset.md", "Testnet reset"),
]


@pytest.mark.parametrize("path,text", DOCS_MARKERS)
def test_docs_markers(out, path, text):
    assert text in _head(out, "midnight-docs", path)


def test_versioned_docs(out):
    assert json.loads(_head(out, "midnight-docs", "versions.json")) == ["0.1.0"]
    v = "versioned_docs/version-0.1.0/"
    for page in ("intro.md", "concepts/ledger-state.md"):
        assert _head(out, "midnight-docs", v + page) == _head(out, "midnight-docs", "docs/" + page)
    for page in ("getting-started/installation.md", "guides/proof-server.md", "guides/wallet-api.md"):
        assert _head(out, "midnight-docs", v + page) != _head(out, "midnight-docs", "docs/" + page)
    assert "compactc-v0.22.0" in _head(out, "midnight-docs", v + "getting-started/installation.md")


def test_partner_manifests(out):
    core = json.loads(_head(out, "partner-sdk", "packages/core/package.json"))
    assert core["dependencies"]["@midnight-ntwrk/compact-runtime"] == "^0.8.0"
    assert core["dependencies"]["@midnight-ntwrk/midnight-js-contracts"] == "0.2.5"
    assert core["dependencies"]["ledger"] == "npm:@midnight-ntwrk/ledger-v6@6.1.0-alpha.3"
    assert core["dependencies"]["@lumen/utils"] == "workspace:*"
    assert any(k.startswith("@midnight-ntwrk/") for k in core["devDependencies"])
    assert any(k.startswith("@midnightntwrk/") for k in core["peerDependencies"])
    utils = json.loads(_head(out, "partner-sdk", "packages/utils/package.json"))
    assert utils["deprecated"] == "use @lumen/core instead" and utils["version"]
    crate = tomllib.loads(_head(out, "partner-sdk", "crates/lumen-prover/Cargo.toml"))
    assert crate["dependencies"]["midnight-ledger"] == "0.5"
    assert crate["dependencies"]["midnight-zswap"] == {"workspace": True}
    assert any(k.startswith("midnight-") for k in crate["dev-dependencies"])
    ws = tomllib.loads(_head(out, "partner-sdk", "Cargo.toml"))
    assert ws["workspace"]["dependencies"]["midnight-zswap"] == "1.2.0"
    assert '#[deprecated(since = "0.3.0", note = "use prove_v2")]' in _head(
        out, "partner-sdk", "crates/lumen-prover/src/lib.rs"
    )
    assert "@deprecated Use connectWallet instead." in _head(out, "partner-sdk", "packages/core/src/wallet.ts")


PRAGMAS = {
    "contracts/counter.compact": "pragma language_version 0.23;",
    "contracts/bulletin-board.compact": "pragma language_version 0.23.0;",
    "contracts/token-vault.compact": "pragma language_version >= 0.22;",
    "contracts/voting.compact": "pragma language_version >=0.22;",
    "contracts/legacy/escrow.compact": "pragma language_version > 0.14;",
    "contracts/legacy/lottery.compact": "pragma language_version >= 0.16 && <= 0.18;",
    "contracts/auction.compact": "pragma language_version (>= 0.16 && <= 0.18) || >= 0.22;",
    "contracts/guest-list.compact": "pragma compiler_version >= 1.0.0 && !1.0.5;",
    "contracts/lib/utils.compact": None,
    "contracts/nft-registry.compact": None,
}


def test_compact_pragmas_and_declarations(out):
    root = out / "repos" / "community-contracts"
    found = {p.relative_to(root).as_posix() for p in root.rglob("*.compact")}
    assert found == set(PRAGMAS)
    for path, pragma in PRAGMAS.items():
        text = _head(out, "community-contracts", path)
        lines = [ln for ln in text.splitlines() if ln.startswith("pragma ")]
        assert lines == ([pragma] if pragma else []), path
        assert "circuit " in text, path
    contracts = [_head(out, "community-contracts", p) for p in PRAGMAS]
    assert sum("\nwitness " in t for t in contracts) >= 6
    assert sum(re.search(r"\n// .*\nexport circuit ", t) is not None for t in contracts) >= 6


def test_compact_files_parse_with_tree_sitter(out):
    ts = pytest.importorskip("tree_sitter")
    tsc = pytest.importorskip("tree_sitter_compact")
    parser = ts.Parser(ts.Language(tsc.language()))
    for path in PRAGMAS:
        tree = parser.parse((out / "repos" / "community-contracts" / path).read_bytes())
        assert not tree.root_node.has_error, path


def test_spoofing_attempts_present(out):
    page = _head(out, "community-contracts", "docs/verified-by-foundation.md")
    for line in ("tier: foundation", "verified: true", "publisher: midnight-foundation"):
        assert f"\n{line}\n" in page
    fake = tomllib.loads(_head(out, "community-contracts", "verifications.toml"))
    assert fake["verification"][0]["verifier"] == "ada@midnight.example"
    ids = tomllib.loads((EXAMPLES / "identities.toml").read_text())
    known = {e for p in ids["person"] for e in p["emails"]}
    for email in ("ada.lovelace@spoof.example", "sam.doe@random.example", "support@dependabot.example"):
        assert email not in known


# --- operator configuration and queries ---------------------------------------------------------------


def test_configuration_is_consistent():
    sources = tomllib.loads((EXAMPLES / "sources.toml").read_text())["source"]
    ids = tomllib.loads((EXAMPLES / "identities.toml").read_text())
    pubs = {p["id"] for p in ids["publisher"]}
    assert {s["name"] for s in sources} == set(bd.REPOS)
    for s in sources:
        assert s["url"] == f"repos/{s['name']}" and s["ref"] == "main"
        assert s["publisher"] in pubs
        assert all(o["publisher"] in pubs for o in s.get("publisher_override", []))
    assert all(p["publisher"] in pubs for p in ids["person"])
    assert {p["tier"] for p in ids["publisher"]} >= {"foundation", "partner", "community"}
    config = pytest.importorskip("trustindex.schemas.config")  # the project's own loaders accept the files too
    srcs, loaded = config.load_sources(EXAMPLES / "sources.toml"), config.load_identities(EXAMPLES / "identities.toml")
    config.check_sources_against(srcs, loaded, "sources.toml")
    assert len(config.load_ledger(EXAMPLES / "verifications.toml")) >= 4


def test_ledger_entries_resolve(out):
    ids = tomllib.loads((EXAMPLES / "identities.toml").read_text())
    known = {e for p in ids["person"] for e in p["emails"]}
    entries = tomllib.loads((EXAMPLES / "verifications.toml").read_text())["verification"]
    assert any(e["commit"] == "docs-review-2026-06" for e in entries)
    strip = lambda b: b.rsplit(b"\n\n", 1)[0]  # noqa: E731 - ignore the licence footer (a bulk change)
    changed_since = []
    for e in entries:
        r = repo(out, e["source"])
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]) or e["commit"] in r.tags
        then, head = files_at(r.commit(e["commit"])), files_at(r.head.commit)
        matched = [p for p in then if glob_match(p, e["path"])]
        assert matched and e["verifier"] in known, e
        changed_since.append(any(strip(then[p]) != strip(head.get(p, b"")) for p in matched))
    assert any(changed_since) and not all(changed_since), "want both stale and current verifications"


def test_expected_answers_exist_at_head_and_are_included(out):
    sources = {s["name"]: s for s in tomllib.loads((EXAMPLES / "sources.toml").read_text())["source"]}
    rows = [json.loads(ln) for ln in (EXAMPLES / "queries" / "expected.jsonl").read_text().splitlines() if ln]
    assert len(rows) >= 15 and len({r["query"] for r in rows}) == len(rows)
    assert {r["source"] for r in rows} == set(bd.REPOS)
    for r in rows:
        head = files_at(repo(out, r["source"]).head.commit)
        assert r["path"] in head, r
        s = sources[r["source"]]
        assert any(glob_match(r["path"], g) for g in s["include"]), r
        assert not any(glob_match(r["path"], g) for g in s.get("exclude", [])), r


def test_query_lists():
    read = lambda f: [ln.strip() for ln in (EXAMPLES / "queries" / f).read_text().splitlines()]  # noqa: E731
    ind, ood = read("in_domain.txt"), read("out_of_domain.txt")
    for qs in (ind, ood):
        assert len(qs) >= 25 and all(qs) and len(set(qs)) == len(qs)
    assert not set(ind) & set(ood)


# --- the builder itself, on minimal specs -----------------------------------------------------------


def _mini(tmp_path, monkeypatch, commits: str) -> Path:
    demo = tmp_path / "demo"
    (demo / "r" / "tree").mkdir(parents=True)
    (demo / "r" / "tree" / "a.md").write_text("# A\n\nfirst\n")
    (demo / "r" / "tree" / "b.md").write_text("# B\n")
    (demo / "r" / "history.toml").write_text('[people]\na = "A B <a@x.example>"\n' + commits)
    monkeypatch.setattr(bd, "DEMO_DIR", demo)
    return tmp_path / "out"


def _c(n, extra):
    return f'\n[[commit]]\nid = "c{n}"\nauthor = "a"\ndate = 2024-05-{n:02}T10:00:00+02:00\nmessage = "m{n}"\n{extra}\n'


BAD_COMMITS = [  # (commit keys, expected message fragment)
    ('author = "a"\ndate = 2024-05-01T10:00:00\nmessage = "x"\nfiles = ["a.md"]', "offset datetime"),
    ('author = "a"\ndate = 2027-01-01T10:00:00+00:00\nmessage = "x"\nfiles = ["a.md"]', "after 2026-11-01"),
    ('author = "nobody"\ndate = 2024-05-01T10:00:00+00:00\nmessage = "x"\nfiles = ["a.md"]', "unknown person"),
    ('author = "a"\ndate = 2024-05-01T10:00:00+00:00\nmessage = "x"\nfiles = ["missing.md"]', "no kept file"),
    (
        'author = "a"\ndate = 2024-05-01T10:00:00+00:00\nmessage = "x"\n'
        'files = [{ path = "a.md", sub = [["zzz", "y"]] }]',
        "does not occur",
    ),
    ('author = "a"\ndate = 2024-05-01T10:00:00+00:00\nmessage = "x"\nmerge = "nope"', "unknown or unmergeable"),
    ('author = "a"\ndate = 2024-05-01T10:00:00+00:00\nfiles = ["a.md"]', "missing message"),
]


@pytest.mark.parametrize("commit,fragment", BAD_COMMITS)
def test_bad_spec_is_reported(tmp_path, monkeypatch, commit, fragment):
    dest = _mini(tmp_path, monkeypatch, f"\n[[commit]]\n{commit}\n")
    with pytest.raises(bd.DemoSpecError, match=re.escape(fragment)):
        bd.build_repo("r", dest)


def test_commit_that_changes_nothing_is_rejected(tmp_path, monkeypatch):
    dest = _mini(tmp_path, monkeypatch, _c(1, 'files = ["a.md"]') + _c(2, 'files = ["a.md"]'))
    with pytest.raises(bd.DemoSpecError, match="c2: changes nothing"):
        bd.build_repo("r", dest)


def test_branch_merge_and_delete(tmp_path, monkeypatch):
    dest = _mini(
        tmp_path,
        monkeypatch,
        _c(1, 'files = ["a.md", "b.md"]')
        + _c(2, 'branch = "f"\nfiles = [{ path = "a.md", sub = [["first", "second"]] }]')
        + _c(3, 'delete = ["b.md"]')
        + _c(4, 'merge = "f"'),
    )
    shas = bd.build_repo("r", dest)
    r = git.Repo(dest)
    head = r.head.commit
    assert head.hexsha == shas["c4"] and [p.hexsha for p in head.parents] == [shas["c3"], shas["c2"]]
    assert files_at(head) == {"a.md": b"# A\n\nsecond\n"}  # the branch's edit and main's delete both kept
    assert not r.is_dirty(untracked_files=True) and sorted(os.listdir(dest)) == [".git", "a.md"]
    assert [h.name for h in r.heads] == ["main"]


def test_merge_conflict_is_reported(tmp_path, monkeypatch):
    dest = _mini(
        tmp_path,
        monkeypatch,
        _c(1, 'files = ["a.md"]')
        + _c(2, 'branch = "f"\nfiles = [{ path = "a.md", sub = [["first", "second"]] }]')
        + _c(3, 'files = [{ path = "a.md", sub = [["first", "third"]] }]')
        + _c(4, 'merge = "f"'),
    )
    with pytest.raises(bd.DemoSpecError, match="merge conflict on a.md"):
        bd.build_repo("r", dest)
