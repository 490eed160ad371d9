"""Issue 29 items 2 and 3: sources.toml at organisation scale and a citation for every hit.

``[defaults]`` and named ``[sets]`` written once for many sources, the built-in default exclude set (and dropping
it), ``ref`` optional (the remote's default branch, followed when it moves), ``web_url`` templates (given, or
derived from a known host), errors that name the file and the key; then a real refresh of two real repositories
(one with a template, one a GitHub-style URL) whose every hit has a url with its lines.
"""

from __future__ import annotations

import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.crawl.git import ensure_mirror, mirror_path, resolve_ref
from trustindex.extractors.globs import first_match
from trustindex.schemas.config import load_sources
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.registry import BUILTIN_SETS
from trustindex.schemas.web_url import cite_lines, derived_template, document_url, file_url

ORG = """
[defaults]
publisher = "mf"
include = ["@docs"]
web_url = "https://git.example.org/midnight/{name}/src/{commit}/{path}?lines={start}-{end}"

[sets]
docs = ["**/*.md", "**/*.mdx"]
compact = ["**/*.compact"]

[[source]]
name = "docs"
url = "repos/docs"

[[source]]
name = "compact"
url = "repos/compact"
ref = "release"
include = ["@docs", "@compact", "README.md"]
exclude = ["examples/**"]

[[source]]
name = "ledger"
url = "https://github.com/midnightntwrk/midnight-ledger.git"
publisher = "partner"
default_exclude = false
web_url = ""
"""


def _write(tmp_path, text: str):
    f = tmp_path / "sources.toml"
    f.write_text(text)
    return f


def test_defaults_and_sets_are_written_once_for_many_sources(tmp_path):
    docs, compact, ledger = load_sources(_write(tmp_path, ORG))
    assert docs.publisher == compact.publisher == "mf" and ledger.publisher == "partner"
    assert docs.include == ("**/*.md", "**/*.mdx")
    assert compact.include == ("**/*.md", "**/*.mdx", "**/*.compact", "README.md")  # replaces, sets expanded
    assert docs.ref == "HEAD" and docs.follows_head and compact.ref == "release" and not compact.follows_head
    # the built-in excludes are added to the source's own, unless it drops them
    builtin = [g for name in ("vendored", "generated", "build") for g in BUILTIN_SETS[name]]
    assert list(docs.exclude) == builtin
    assert compact.exclude[0] == "examples/**" and list(compact.exclude[1:]) == builtin
    assert ledger.exclude == ()
    assert first_match("packages/x/node_modules/lib/README.md", docs.exclude) == "**/node_modules/**"
    assert first_match("build/output.md", docs.exclude) == "**/build/**"
    assert first_match("docs/build-a-dapp.md", docs.exclude) is None
    # the defaults' template names each source; the ledger's own "" falls back to GitHub's layout
    assert docs.web_template.startswith("https://git.example.org/midnight/{name}/")
    assert ledger.web_template == (
        "https://github.com/midnightntwrk/midnight-ledger/blob/{commit}/{path}#L{start}-L{end}"
    )
    # a template given changes the source's digest; a derived one does not (it changes nothing stored)
    assert docs.config_sha256 != type(docs)(**{**docs.__dict__, "web_url": ""}).config_sha256


@pytest.mark.parametrize(
    "text, key, words",
    [
        ('[defaults]\nsite_url = "https://x"\n[[source]]\nname = "a"\nurl = "x"\n', "defaults.site_url", "shared"),
        (
            '[defaults]\npublisher = "mf"\n[[source]]\nname = "a"\nurl = "x"\ninclude = ["@nope"]\n',
            "source[a].include[0]",
            "unknown set '@nope'",
        ),
        (
            '[defaults]\npublisher = "mf"\nexclude = ["@nope"]\n[[source]]\nname = "a"\nurl = "x"\n',
            "defaults.exclude[0]",
            "unknown set",
        ),
        ('[sets]\nbuild = ["x/**"]\n[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\n', "sets.build", "built-in"),
        (
            '[sets]\ndocs = ["@build"]\n[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\n',
            "sets.docs[0]",
            "not other sets",
        ),
        ('[sets]\ndocs = "*.md"\n[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\n', "sets.docs", "list"),
        (
            '[defaults]\nweb_url = "https://x/{file}"\n[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\n',
            "defaults.web_url",
            "unknown placeholder {file}",
        ),
        (
            '[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\nweb_url = "https://x/{commit}"\n',
            "source[a].web_url",
            "{path}",
        ),
        (
            '[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\nweb_url = "ftp://x/{path}"\n',
            "source[a].web_url",
            "http(s)",
        ),
        (
            '[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\ndefault_exclude = "no"\n',
            "source[a].default_exclude",
            "true or false",
        ),
        ('[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\nref = ""\n', "source[a].ref", "non-empty"),
        ('[default]\npublisher = "mf"\n[[source]]\nname = "a"\nurl = "x"\n', ".default", "unknown key"),
    ],
)
def test_bad_registries_name_the_file_and_the_key(tmp_path, text, key, words):
    f = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_sources(f)
    assert e.value.key == key and words in e.value.problem and str(f) in str(e.value)


def test_web_url_templates_are_derived_for_known_hosts_and_filled_per_passage():
    gh = derived_template("git@github.com:midnightntwrk/compact.git")
    assert gh == "https://github.com/midnightntwrk/compact/blob/{commit}/{path}#L{start}-L{end}"
    assert derived_template("ssh://git@gitlab.com/org/sub/repo.git").endswith(
        "/org/sub/repo/-/blob/{commit}/{path}#L{start}-{end}"
    )
    assert derived_template("https://codeberg.org/o/r").startswith("https://codeberg.org/o/r/src/commit/")
    assert (
        derived_template("https://git.example.org/o/r.git")
        == "https://git.example.org/o/r/blob/{commit}/{path}#L{start}-L{end}"
    )
    assert derived_template("/srv/mirrors/compact") == "" and derived_template("repos/docs") == ""
    # GitHub's form is stored as before templates (no placeholders): the query side appends the lines
    stored = file_url(gh, "compact", "c0ffee", "docs/a b#c.md")
    assert stored == "https://github.com/midnightntwrk/compact/blob/c0ffee/docs/a%20b%23c.md"
    assert cite_lines(stored, 3, 9) == stored + "#L3-L9"
    gl = file_url(derived_template("https://gitlab.com/o/r"), "r", "c0ffee", "x.md")
    assert cite_lines(gl, 3, 9) == "https://gitlab.com/o/r/-/blob/c0ffee/x.md#L3-9"
    assert document_url(gl) == "https://gitlab.com/o/r/-/blob/c0ffee/x.md"
    own = file_url("https://h/{name}/{commit}/{path}?l={start}-{end}", "docs", "abc", "p.md")
    assert own == "https://h/docs/abc/p.md?l={start}-{end}" and cite_lines(own, 1, 2) == "https://h/docs/abc/p.md?l=1-2"
    assert file_url("", "docs", "abc", "p.md") == ""


def test_no_ref_follows_the_remote_default_branch_when_it_moves(tmp_path):
    b = RepoBuilder(tmp_path / "src")
    first = b.commit({"README.md": "# One\n"}, "one")
    dest = mirror_path(tmp_path / "data", "s")
    assert resolve_ref(ensure_mirror(str(b.path), dest, follow_head=True), "HEAD") == first
    # the default branch is renamed to ledger-8 and moves on: the next fetch follows it
    b.repo.git.branch("-m", "main", "ledger-8")
    second = b.commit({"README.md": "# Two\n"}, "two")
    repo = ensure_mirror(str(b.path), dest, follow_head=True)
    assert resolve_ref(repo, "HEAD") == second
    assert repo.git.symbolic_ref("HEAD") == "refs/heads/ledger-8"


def test_every_hit_of_a_refreshed_registry_cites_its_file_and_lines(tmp_path, prefect_harness):
    from trustindex.flows.refresh import refresh_flow
    from trustindex.query import Index
    from trustindex.schemas.config import BuildConfig, Identities, Publisher
    from trustindex.schemas.policy import Policy
    from trustindex.schemas.refresh_run import RefreshRequest

    for name in ("docs", "compact"):
        b = RepoBuilder(tmp_path / "repos" / name)
        pages = {f"guide/p{i}.md": f"# {name} guide {i}\n\nHow to deploy contract {i} with {name}.\n" for i in range(4)}
        pages["node_modules/dep/README.md"] = "# Vendored\n\nHow to deploy a vendored package.\n"
        b.commit(pages, "pages")
    text = ORG.split('[[source]]\nname = "ledger"')[0].replace('ref = "release"\n', "")
    sources = load_sources(_write(tmp_path, text))
    ids = Identities()
    ids.publishers["mf"] = Publisher("mf", "Midnight Foundation", "foundation")
    result = refresh_flow(BuildConfig(sources, ids, [], Policy.default()), RefreshRequest(str(tmp_path / "data")))
    assert result.failures == {} and {s.ref for s in result.sources} == {"HEAD"}
    hits = Index.open(data_dir=tmp_path / "data").search("How do I deploy a contract?", k=20)["hits"]
    assert len(hits) == 8  # the vendored README is excluded by the built-in set
    for h in hits:
        p = h["provenance"]
        assert p["url"] == (
            f"https://git.example.org/midnight/{p['source']}/src/{p['commit']}/{p['path']}"
            f"?lines={p['start_line']}-{p['end_line']}"
        )
